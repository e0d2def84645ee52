"""Matrix–vector products (`A @ x` with x: [K, 1]), batched or not, with fused epilogues.

A GEMV reads every element of A once and does two flops per element: it is bound by memory
bandwidth, so the tiled GEMM sketches (built for reuse) waste most of their tile. Here one warp
owns one output row: its lanes stream the row of A with 16-byte loads, multiply by x (which
every warp re-reads; it stays in L1/L2), and a shuffle tree sums the 32 partials.
"""
# ruff: noqa: E501  (CUDA text is kept one generated line per source line, so it reads as it renders)
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import (DesignSpace, Launch, Point, RenderedKernel, Sketch, Token, dim_c, frame, launcher_params,
                   launcher_signature, load_as_compute)
from .gemm_common import (GemmProblem, batch_pointer, gemm_problem, kernel_args, kernel_params, read_problem,
                          render_epilogue, size_guard, store)
from .warp import PACK_BYTES, PACK_HELPERS


class WarpPerRowGemv(Sketch):
    name = "gemm.gemv_warp_rows"
    pattern = "gemm"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        gp = read_problem(problem)
        if isinstance(gp, str):
            return gp
        if gp.N != 1:
            return "the GEMV sketch needs a single output column (x: [K, 1])"
        if gp.a.layout != "row":
            return "the GEMV sketch reads A row by row (K contiguous); A.T is not supported"
        return None

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        gp = gemm_problem(problem)
        widest = PACK_BYTES // gp.in_dtype.size
        tokens = [
            Token("warps_per_block", (2, 4, 8), "rows (one per warp) computed by a block"),
            Token("vector", (1, widest), "elements per load: 16-byte packs need K a literal multiple"),
            Token("unroll", (1, 2, 4), "packs each lane has in flight per loop trip"),
        ]

        def aligned(p: Point) -> str | None:
            if p["vector"] > 1 and not gp.is_multiple(gp.K, p["vector"]):
                return f"{p['vector']}-wide loads need K to be a literal multiple of {p['vector']}"
            return None

        def fits(p: Point) -> str | None:
            threads = 32 * p["warps_per_block"]
            return None if threads <= arch.max_threads_per_block else f"{threads} threads exceed the block limit"

        return DesignSpace(tokens, [aligned, fits])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        space = self.space(problem, arch)
        return space.first_legal({"warps_per_block": 4, "vector": vector, "unroll": 2}
                                 for vector in sorted(space.token("vector").choices, reverse=True))

    def render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        gp = gemm_problem(problem)
        self.space(problem, arch).require_legal(point, self.name)
        kernel = f"{name}_kernel"
        warps = point["warps_per_block"]
        threads = 32 * warps
        params = launcher_params(problem)
        launcher = (f"{launcher_signature(name, params)} {{\n"
                    f"{size_guard(gp)}"
                    f"    const dim3 grid_dims(({dim_c(gp.M)} + {warps} - 1) / {warps}, 1, {dim_c(gp.batch)});\n"
                    f"    dice_{name}::{kernel}<<<grid_dims, {threads}, 0, stream>>>({kernel_args(gp)});\n}}\n")
        strategy = (f"{gp.in_dtype} matrix-vector product, one warp per output row, "
                    f"{point['vector']}-element loads, {point['unroll']} in flight per lane, shuffle-tree sum"
                    f"{', fused epilogue' if gp.has_epilogue else ''}")
        source = frame(name=name, strategy=strategy, tokens=point,
                       device_code=_device_code(gp, point, kernel), launcher_code=launcher)
        grid = ((gp.hint(gp.M) + warps - 1) // warps, 1, gp.hint(gp.batch))
        return RenderedKernel(
            sketch=self.name, tokens=dict(point), source=source, kernel_names=[f"dice_{name}::{kernel}"],
            launcher=launcher, params=params, launches=[Launch(kernel, grid, (threads, 1, 1), 0)],
            summary=f"gemv warp/row w{warps} v{point['vector']} u{point['unroll']}")


def _device_code(gp: GemmProblem, p: Point, kernel: str) -> str:
    ctype = gp.in_dtype.c_type
    acc = gp.acc_ctype
    a_value = load_as_compute(gp.in_dtype, "a.v[e]")
    x_value = load_as_compute(gp.in_dtype, "v.v[e]")
    a_ptr = batch_pointer(f"const {ctype}", "A_b", gp.a.param, gp.a.batched, "M * K")
    x_ptr = batch_pointer(f"const {ctype}", "x_b", gp.b.param, gp.b.batched, "K")
    c_ptr = batch_pointer(gp.out_dtype.c_type, "C_b", gp.out_param, gp.batch != 1, "M")
    return f"""{PACK_HELPERS}

{render_epilogue(gp)}
constexpr int WARPS = {p['warps_per_block']};   // rows per block, one per warp
constexpr int VEC = {p['vector']};     // elements per load
constexpr int UNROLL = {p['unroll']};  // loads in flight per lane

__global__ void __launch_bounds__(WARPS * 32) {kernel}({kernel_params(gp)}) {{
    const int lane = threadIdx.x % 32;
    const long long row = (long long)blockIdx.x * WARPS + threadIdx.x / 32;
    if (row >= M) return;   // the whole warp shares `row`: it leaves together, and no barrier follows
    {a_ptr}
    {x_ptr}
    {c_ptr}
    const {ctype}* a_row = A_b + row * K;
    const long long packs = K / VEC;   // VEC divides K (a design constraint)
    {acc} sum = 0;
    for (long long first = lane; first < packs; first += 32 * UNROLL) {{
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {{
            const long long pack = first + u * 32;
            if (pack < packs) {{
                const Pack<{ctype}, VEC> a = load_pack<{ctype}, VEC>(a_row, pack);
                const Pack<{ctype}, VEC> v = load_pack<{ctype}, VEC>(x_b, pack);
#pragma unroll
                for (int e = 0; e < VEC; ++e) sum += ({acc})({a_value}) * ({acc})({x_value});
            }}
        }}
    }}
    // Every lane of the warp reaches here (rows are warp-uniform), so full-mask shuffles are safe.
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0) {{
        {store(gp, "sum", "row", "0")}
    }}
}}"""


SKETCHES: list[Sketch] = [WarpPerRowGemv()]

SAMPLE_INTENTS: list[str] = [
    "y = A @ x; A: f32[8192, 8192]; x: f32[8192, 1]",
    "y = A @ x; A: f32[1000, 999]; x: f32[999, 1]",
    "y = relu(A @ x + b); A: f16[4096, 4096]; x: f16[4096, 1]; b: f16[4096, 1]",
    "y = A @ x; A: bf16[8, 512, 1024]; x: bf16[8, 1024, 1]",
    "y = A @ x; A: f32[M, 768]; x: f32[768, 1]; M=777",
]
