"""A small sketch and a fake compiler for exercising the loop without nvcc: a scaled copy whose
register use grows with the work per thread, spilling at 16 items per thread."""
from __future__ import annotations

from dice_engine.compile import CompileMessage, CompileResult, KernelResources
from dice_engine.ir.dtypes import F32
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.ops import const, input_tensor, make
from dice_engine.ir.patterns import Problem, classify
from dice_engine.sketches.base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token,
                                       frame,
                                       launcher_params, launcher_signature)

N = 1 << 26


def scale_problem(n: int = N) -> Problem:
    x = input_tensor("x", F32, (n,))
    program = Program({"x": TensorDecl("x", F32, (n,))}, "y", make("mul", [x, const(2.0)]))
    return classify(program)


class TinySketch(Sketch):
    name = "test.tiny"
    pattern = "elementwise"

    def __init__(self, default: Point | None = None):
        self.default = default or {"threads": 32, "items_per_thread": 16}

    def unsupported(self, problem, arch):
        return None

    def space(self, problem, arch):
        return DesignSpace([Token("threads", (32, 64, 128, 256, 512, 1024), "threads per block",
                                  (Role.THREADS,)),
                            Token("items_per_thread", (1, 2, 4, 8, 16), "elements per thread", (Role.WORK,))],
                           [lambda p: "more than 8192 elements per block"
                            if p["threads"] * p["items_per_thread"] > 8192 else None])

    def default_point(self, problem, arch):
        return dict(self.default)

    def _render(self, problem, arch, point, name):
        threads, items = point["threads"], point["items_per_thread"]
        n = problem.program.concrete_shape(problem.output.shape)[0]
        per_block = threads * items
        device = (f"__global__ void __launch_bounds__({threads}) {name}_kernel(const float* x, float* y) {{\n"
                  f"  long long base = (long long)blockIdx.x * {per_block} + threadIdx.x;\n"
                  f"  #pragma unroll\n"
                  f"  for (int i = 0; i < {items}; ++i) {{\n"
                  f"    long long j = base + (long long)i * {threads};\n"
                  f"    if (j < {n}LL) y[j] = 2.0f * x[j];\n  }}\n}}\n")
        blocks = -(-n // per_block)
        params = launcher_params(problem)
        launcher = (f"{launcher_signature(name, params)} {{\n"
                    f"  dice_{name}::{name}_kernel<<<{blocks}, {threads}, 0, stream>>>(x, y);\n}}\n")
        source = frame(name=name, strategy="grid-stride copy", tokens=point, device_code=device,
                       launcher_code=launcher)
        launch = Launch(f"{name}_kernel", (blocks, 1, 1), (threads, 1, 1), 0)
        return RenderedKernel(self.name, dict(point), source, [f"dice_{name}::{name}_kernel"], launcher,
                              params, [launch], f"tiny threads={threads} items={items}")


class FakeCompiler:
    """Resources as a function of the tokens; counts calls; fails on `broken` points."""

    def __init__(self, broken: set[tuple[int, int]] = frozenset()):
        self.calls: list[Point] = []
        self.broken = broken

    def __call__(self, rendered: RenderedKernel, arch) -> CompileResult:
        self.calls.append(dict(rendered.tokens))
        threads, items = rendered.tokens["threads"], rendered.tokens["items_per_thread"]
        if (threads, items) in self.broken:
            return CompileResult(False, [CompileMessage("k.cu", 3, 5, "error", "expected a ';'")])
        spill = 256 if items >= 16 else 0
        kernel = rendered.launches[0].kernel
        res = KernelResources(min(255, 16 + 6 * items), spill // 2, spill // 2, 0, spill, 0)
        return CompileResult(True, resources={kernel: res})
