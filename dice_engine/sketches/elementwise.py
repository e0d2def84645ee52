"""Fused elementwise / broadcast kernels: any expression DAG over inputs that broadcast to the
output, one pass over memory.

Each thread moves 16-byte packs (when every packed pointer is 16-byte aligned, checked at run
time; otherwise the whole range goes through the scalar loop), `unroll` packs in flight per
step; inputs that broadcast are read as packs (a suffix of the output's shape), once per pack
(constant across it) or per element (gather). A scalar loop covers the tail. The grid is either
one-shot (every thread does one step) or a few waves of resident blocks striding over the range.
"""
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .access import (hint_int, pack_declarations, pack_element, pack_loads, plan_access, prod_c,
                     scalar_element, words_per_element)
from .base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, frame, launcher_params,
                   store_from_compute)
from .fusion import (describe, emit_expression, expression_ctype, input_nodes, kernel_param_list,
                       name_clash, shape_text)
from .warp import (PACK_HELPERS, indent, launcher_opening, min_blocks_per_sm, pack_width, register_budget,
                   shrink_unroll, tidy, wave_grid_cap)

GRID_STRIDE_WAVES = 2     # waves of resident blocks for the grid-stride schedule
BASE_REGISTERS = 24       # index math and loop state, besides the data in flight


# Identifiers the kernels below declare (a tensor or symbol must not shadow them).
LOCALS = frozenset("""
    numel stride first step steps slot pack elem idx n_packs
""".split())


# operators whose CUDA code is a multi-instruction libm call
SLOW_MATH = {"exp", "log", "tanh", "sigmoid", "silu", "gelu", "erf", "sin", "cos", "pow", "sqrt", "rsqrt"}


class FusedElementwise(Sketch):
    name = "elementwise.fused"
    pattern = "elementwise"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return name_clash(problem, LOCALS)

    def _vec(self, problem: Problem) -> int:
        tensors = [n.dtype for n in input_nodes(problem.output)] + [problem.output.dtype]
        return pack_width(tensors)

    def _words_in_flight(self, problem: Problem, point: Point) -> int:
        """32-bit registers holding one step's packs (inputs read as packs, and the output)."""
        vec = point["vec"]
        accesses = [plan_access(n, problem.output.shape, vec) for n in input_nodes(problem.output)]
        words = sum(words_per_element(a) for a in accesses) + problem.output.dtype.size / 4
        return max(1, int(point["unroll"] * vec * words))

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        full_vec = self._vec(problem)
        tokens = [
            Token("threads", (64, 128, 256, 512, 1024), "threads per block", (Role.THREADS,)),
            Token("vec", tuple(sorted({1, full_vec})), "elements per access (16 bytes when > 1)",
                  (Role.VECTOR,)),
            Token("unroll", (1, 2, 4, 8), "packs in flight per thread per step", (Role.UNROLL,)),
            Token("schedule", ("one_shot", "grid_stride"),
                       "one step per thread, or a few waves of blocks striding over the range", ()),
        ]

        def threads_fit(p: Point) -> str | None:
            if p["threads"] > arch.max_threads_per_block:
                return f"{p['threads']} threads exceed the block limit {arch.max_threads_per_block}"
            return None

        def registers_fit(p: Point) -> str | None:
            budget = register_budget(arch, p["threads"])
            need = BASE_REGISTERS + self._words_in_flight(problem, p)
            if need > budget:
                return f"~{need} registers per thread needed, {budget} available at {p['threads']} threads"
            return None

        return DesignSpace(tokens, [threads_fit, registers_fit])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        vec = self._vec(problem)
        numel = hint_int(problem.program, problem.output.shape)
        # Two packs per thread keep ~32 bytes per tensor in flight once the range fills the GPU.
        big = numel >= arch.sms * arch.max_threads_per_sm * vec * 2
        # Long-latency math (erff, expf, ...) wants more packs in flight to keep memory busy
        # (H200, gelu on bf16: 46 µs with four against 52 µs with two).
        slow = any(n.op in SLOW_MATH for n in problem.output.walk())
        unroll = (4 if slow else 2) if big else 1
        point = {"threads": 256, "vec": vec, "unroll": unroll, "schedule": "one_shot"}
        return shrink_unroll(self.space(problem, arch), point)

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        out = problem.output
        vec, threads, unroll = point["vec"], point["threads"], point["unroll"]
        nodes = input_nodes(out)
        accesses = [plan_access(n, out.shape, vec) for n in nodes]
        ctype = expression_ctype(out)
        params = launcher_params(problem)
        out_name, out_type = problem.program.output_name, out.dtype.c_type
        numel = prod_c(out.shape)
        kernel = f"{name}_kernel"

        kernel_params = kernel_param_list(params) + ["long long n_packs"]

        def element_code(raw: dict[str, str], target: str) -> str:
            emitted = emit_expression(out, raw, ctype)
            lines = emitted.statements + [f"{target} = {store_from_compute(out.dtype, emitted.value)};"]
            return "\n".join(lines)

        pack_raw = {a.name: pack_element(a, "slot", "elem", "pack * kVec + elem") for a in accesses}
        scalar_raw = {a.name: scalar_element(a, "idx") for a in accesses}
        loads = pack_loads(accesses, "pack", "slot")
        body = f"""\
constexpr int kThreads = {threads};
constexpr int kMinBlocks = {min_blocks_per_sm(arch, threads)};  // per SM, for ptxas's register budget
constexpr int kVec = {vec};       // elements per pack{" (16 bytes)" if vec > 1 else " (scalar accesses)"}
constexpr int kUnroll = {unroll};    // packs in flight per thread per step

{PACK_HELPERS}

// {describe(problem)}: {shape_text(out.shape)} elements.
// Packs [0, n_packs) are moved {vec} elements at a time (n_packs is 0 when a pointer is
// misaligned); the scalar loop below takes the remaining elements.
__global__ void __launch_bounds__(kThreads, kMinBlocks) {kernel}({", ".join(kernel_params)}) {{
    const long long numel = {numel};
    const long long stride = (long long)gridDim.x * kThreads;
    const long long first = (long long)blockIdx.x * kThreads + threadIdx.x;

    for (long long step = first; step < n_packs; step += kUnroll * stride) {{
{indent(chr(10).join(pack_declarations(accesses, "kUnroll")), 8)}
        // All loads of the step first, so kUnroll packs per tensor are in flight together.
#pragma unroll
        for (int slot = 0; slot < kUnroll; ++slot) {{
            const long long pack = step + slot * stride;
            if (pack < n_packs) {{
{indent(chr(10).join(loads), 16)}
            }}
        }}
#pragma unroll
        for (int slot = 0; slot < kUnroll; ++slot) {{
            const long long pack = step + slot * stride;
            if (pack >= n_packs) break;
            Pack<{out_type}, kVec> {out_name}_pack;
#pragma unroll
            for (int elem = 0; elem < kVec; ++elem) {{
{indent(element_code(pack_raw, f"{out_name}_pack.v[elem]"), 16)}
            }}
            store_pack<{out_type}, kVec>({out_name}, pack, {out_name}_pack);
        }}
    }}
    // Scalar tail (and the whole range when the pointers are not 16-byte aligned).
    for (long long idx = n_packs * kVec + first; idx < numel; idx += stride) {{
{indent(element_code(scalar_raw, f"{out_name}[idx]"), 8)}
    }}
}}"""
        device_code = body
        packed_pointers = [a.name for a in accesses if a.packed] + [out_name]
        aligned = " | ".join(f"reinterpret_cast<uintptr_t>({p})" for p in packed_pointers)
        ns = f"dice_{name}"
        cap = wave_grid_cap(arch, threads, GRID_STRIDE_WAVES)
        grid_rule = (f"blocks < {cap} ? blocks : {cap};  // {GRID_STRIDE_WAVES} waves of resident "
                     "blocks stride over the range" if point["schedule"] == "grid_stride"
                     else "blocks;  // one-shot: every thread does a single step")
        call_args = ", ".join([p.name for p in params] + ["n_packs"])
        launcher = f"""\
{launcher_opening(name, params, {"numel": numel}, "numel == 0")}
    // 16-byte packs need 16-byte aligned pointers; otherwise everything takes the scalar loop.
    const bool aligned = (({aligned}) % 16) == 0;
    const long long n_packs = (kn::kVec > 1 && !aligned) ? 0 : numel / kn::kVec;
    // Threads needed: one per kUnroll packs (the < kVec tail rides on the first threads).
    const long long steps = n_packs > 0 ? (n_packs + kn::kUnroll - 1) / kn::kUnroll : numel;
    const long long blocks = (steps + kn::kThreads - 1) / kn::kThreads;
    const long long grid = {grid_rule}
    kn::{kernel}<<<(unsigned)grid, kn::kThreads, 0, stream>>>({call_args});
}}"""
        strategy = (f"fused elementwise, {'16-byte packs' if vec > 1 else 'scalar accesses'} "
                    f"({vec} elements), {unroll} in flight per thread, {point['schedule'].replace('_', '-')}")
        source = frame(name=name, strategy=strategy, tokens=point, device_code=tidy(device_code),
                       launcher_code=launcher)
        numel_hint = hint_int(problem.program, out.shape)
        steps = -(-numel_hint // (vec * unroll))
        blocks = max(1, -(-steps // threads))
        grid = min(blocks, cap) if point["schedule"] == "grid_stride" else blocks
        return RenderedKernel(
            sketch=self.name, tokens=dict(point), source=source, kernel_names=[f"{ns}::{kernel}"],
            launcher=launcher, params=params, launches=[Launch(kernel, (grid, 1, 1), (threads, 1, 1), 0)],
            summary=f"{self.name} threads={threads} vec={vec} unroll={unroll} {point['schedule']}")


SKETCHES: list[Sketch] = [FusedElementwise()]

SAMPLE_INTENTS: list[str] = [
    "y = relu(x); x: f32[16384, 16384]",
    "y = relu(a) * 2.5 + b; a, b: f32[67108864]",
    "y = gelu(x + b); x: bf16[N, 1024]; b: bf16[1024]; N=777",
    "y = x * s + c; x: f16[1000, 333]; s: f16[1000, 1]; c: f16[333]",
    "y = sigmoid(x) * x; x: f32[N]; N=1000003",
    "y = where(x > 0, x, 0.1 * x); x: f64[4097]",
    "y = x + 1; x: i32[3, 5, 7]",
    "y = clamp(a - b, min=-1.0, max=1.0); a: f16[64, 1, 80]; b: f16[1, 48, 80]",
]
