"""Hand-written candidates for `y = x + 1; x: f32[N]`, each misbehaving in one planted way, to
check that the runner reports every failure as such and keeps serving the next candidate."""
from __future__ import annotations

from dice_engine.ir import ops
from dice_engine.ir.dtypes import F32
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.patterns import Problem, classify
from dice_engine.sketches.base import Launch, RenderedKernel, frame, launcher_params, launcher_signature

KERNEL_BODIES = {
    "good": "if (i < n) y[i] = x[i] + 1.0f;",
    "wrong": "if (i < n) y[i] = x[i] + 2.0f;",
    "half_written": "if (i < n && i % 2 == 0) y[i] = x[i] + 1.0f;",
    "overrun": "if (i <= n) y[i] = x[i < n ? i : 0] + 1.0f;",
    "fault": "if (i < n) ((float*)0x10)[i * 1024] = 1.0f;",
    # inputs are never 12345, but the compiler cannot know: the loop spins until killed
    "race": ("__shared__ float s[256]; s[threadIdx.x] = i < n ? x[i] : 0.0f; "
             "float v = s[(threadIdx.x + 1) % 256]; if (i < n) y[i] = v + 1.0f;"),
    "strided": "if (i < n) y[i] = x[(i * 32) % n] + 1.0f;",
    "hang": "while (*(volatile const float*)x != 12345.0f) { } if (i < n) y[i] = 0.0f;",
}
BLOCK = {"launch_failure": 2048}   # more threads per block than any GPU allows


def problem(n: int = 100_003) -> Problem:
    x = ops.input_tensor("x", F32, ("N",))
    y = ops.make("add", [x, ops.const(1.0)])
    return classify(Program({"x": TensorDecl("x", F32, ("N",))}, "y", y, {"N": n}, {}, "y = x + 1"))


def planted(kind: str, prob: Problem | None = None) -> RenderedKernel:
    prob = prob or problem()
    name = f"planted_{kind}"
    body = KERNEL_BODIES.get(kind, KERNEL_BODIES["good"])
    block = BLOCK.get(kind, 256)
    params = launcher_params(prob)
    device = (f"__global__ void kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {{\n"
              f"  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n  {body}\n}}")
    launcher = (f"{launcher_signature(name, params)} {{\n"
                f"  long long blocks = (N + {block} - 1) / {block};\n"
                f"  dice_{name}::kernel<<<(unsigned)blocks, {block}, 0, stream>>>(x, y, N);\n}}")
    source = frame(name=name, strategy=f"planted {kind}", tokens={}, device_code=device,
                   launcher_code=launcher)
    return RenderedKernel(sketch="planted", tokens={}, source=source, kernel_names=[f"dice_{name}::kernel"],
                          launcher=f"{name}_launch", params=params,
                          launches=[Launch("kernel", (1, 1, 1), (block, 1, 1), 0)], summary=f"planted {kind}")
