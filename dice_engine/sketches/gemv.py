"""Matrix–vector products (`A @ x` with x: [K, 1]), batched or not, with fused epilogues.

A GEMV reads every element of A once and does two flops per element: it is bound by memory
bandwidth, so the tiled GEMM sketches (built for reuse) waste most of their tile. Here one warp
owns one output row (or one of `k_splits` slices of it): its lanes stream the row of A with
16-byte loads, multiply by x (which every warp re-reads; it stays in L1/L2), and a shuffle tree
sums the 32 partials.

Accuracy on long rows (K = 2^20): a lane never runs one long serial sum. It adds about
FLUSH_ELEMENTS products into a short block sum, then folds that block into its running total with TwoSum
(the total keeps the rounding error each fold drops), so the error grows with the block length
only, not with the lane's share of K; the fold costs a few flops per block of 100+ elements. With k_splits > 1 each slice of the row writes a partial to a workspace the
launcher allocates on the stream and frees after a second kernel has merged the partials in
slice order (deterministic, no atomics) and applied the epilogue. Splitting also fills the GPU
when there are too few rows for one warp per row to occupy every SM.
"""
# ruff: noqa: E501  (CUDA text is kept one generated line per source line, so it reads as it renders)
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, dim_c, frame, launcher_params,
                   launcher_signature, load_as_compute, store_from_compute)
from .gemm_common import (GemmProblem, batch_pointer, gemm_problem, kernel_args, kernel_params, output_value,
                          read_problem, render_epilogue, size_guard, store)
from .warp import PACK_BYTES, PACK_HELPERS, pow2_floor

FLUSH_ELEMENTS = 32   # products a lane adds into its block sum before folding it into the total
MIN_SPLIT_PACKS = 256  # packs per lane and slice below which splitting a row costs more than it hides


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
            Token("warps_per_block", (2, 4, 8), "rows (one per warp) computed by a block", (Role.THREADS,)),
            Token("vector", (1, widest), "elements per load: 16-byte packs need K a literal multiple", (Role.VECTOR,)),
            Token("unroll", (1, 2, 4), "packs each lane has in flight per loop trip", (Role.UNROLL,)),
            Token("k_splits", (1, 2, 4, 8, 16, 32), "slices of each row (blocks along K) whose partials a "
                  "second kernel merges in order", (Role.SPLIT,)),
        ]

        def aligned(p: Point) -> str | None:
            if p["vector"] > 1 and not gp.is_multiple(gp.K, p["vector"]):
                return f"{p['vector']}-wide loads need K to be a literal multiple of {p['vector']}"
            return None

        def fits(p: Point) -> str | None:
            threads = 32 * p["warps_per_block"]
            return None if threads <= arch.max_threads_per_block else f"{threads} threads exceed the block limit"

        def slices_have_work(p: Point) -> str | None:
            if p["k_splits"] == 1:
                return None
            packs_per_lane = gp.hint(gp.K) // (p["vector"] * 32 * p["k_splits"])
            if packs_per_lane < MIN_SPLIT_PACKS // 8:
                return f"k_splits={p['k_splits']} leaves {packs_per_lane} loads per lane and slice"
            return None

        return DesignSpace(tokens, [aligned, fits, slices_have_work])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        gp = gemm_problem(problem)
        space = self.space(problem, arch)
        rows = gp.hint(gp.M) * gp.hint(gp.batch)
        warp_slots = arch.sms * arch.max_warps_per_sm
        vectors = sorted(space.token("vector").choices, reverse=True)
        splits = 1
        if 2 * rows < warp_slots:   # too few rows to occupy half the GPU one warp per row: split K
            want = 1 << (-(-warp_slots // rows) - 1).bit_length()   # rows x splits fill every warp slot
            most = pow2_floor(gp.hint(gp.K) // (vectors[0] * 32 * MIN_SPLIT_PACKS))
            splits = min(want, most, 32)
        return space.first_legal({"warps_per_block": 4, "vector": vector, "unroll": 2, "k_splits": s}
                                 for s in (splits, 1) for vector in vectors)

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        gp = gemm_problem(problem)
        kernel, merge = f"{name}_kernel", f"{name}_merge_kernel"
        warps, splits = point["warps_per_block"], point["k_splits"]
        threads = 32 * warps
        params = launcher_params(problem)
        row_blocks = f"({dim_c(gp.M)} + {warps} - 1) / {warps}"
        if splits == 1:
            body = (f"    const dim3 grid_dims({row_blocks}, 1, {dim_c(gp.batch)});\n"
                    f"    dice_{name}::{kernel}<<<grid_dims, {threads}, 0, stream>>>({kernel_args(gp)}, nullptr);\n")
        else:
            outputs = f"(size_t)({dim_c(gp.M)}) * (size_t)({dim_c(gp.batch)})"
            body = (f"    // Stage-1 partials, allocated on the stream and freed once the merge has read them.\n"
                    f"    {gp.acc_ctype}* partials = nullptr;\n"
                    f"    if (cudaMallocAsync((void**)&partials, {splits} * {outputs} * sizeof({gp.acc_ctype}), "
                    f"stream) != cudaSuccess) return;\n"
                    f"    const dim3 grid_dims({row_blocks}, {splits}, {dim_c(gp.batch)});\n"
                    f"    dice_{name}::{kernel}<<<grid_dims, {threads}, 0, stream>>>({kernel_args(gp)}, partials);\n"
                    f"    const dim3 merge_dims(({dim_c(gp.M)} + 255) / 256, 1, {dim_c(gp.batch)});\n"
                    f"    dice_{name}::{merge}<<<merge_dims, 256, 0, stream>>>({kernel_args(gp)}, partials);\n"
                    f"    cudaFreeAsync(partials, stream);\n")
        launcher = f"{launcher_signature(name, params)} {{\n{size_guard(gp)}{body}}}\n"
        strategy = (f"{gp.in_dtype} matrix-vector product, one warp per output row"
                    f"{f' and K slice ({splits} slices, partials merged in order by a second kernel)' if splits > 1 else ''}, "
                    f"{point['vector']}-element loads, {point['unroll']} in flight per lane, lane sums in blocks "
                    f"of {FLUSH_ELEMENTS} products, shuffle-tree sum{', fused epilogue' if gp.has_epilogue else ''}")
        source = frame(name=name, strategy=strategy, tokens=point,
                       device_code=_device_code(gp, point, kernel, merge), launcher_code=launcher)
        rows, batch = gp.hint(gp.M), gp.hint(gp.batch)
        launches = [Launch(kernel, ((rows + warps - 1) // warps, splits, batch), (threads, 1, 1), 0)]
        kernel_names = [f"dice_{name}::{kernel}"]
        if splits > 1:
            launches.append(Launch(merge, ((rows + 255) // 256, 1, batch), (256, 1, 1), 0))
            kernel_names.append(f"dice_{name}::{merge}")
        return RenderedKernel(
            sketch=self.name, tokens=dict(point), source=source, kernel_names=kernel_names,
            launcher=launcher, params=params, launches=launches,
            k_splits=splits, workspace_bytes=(splits * rows * batch * 4 if splits > 1 else 0),
            bytes_in_flight=int(point["vector"]) * int(point["unroll"]) * gp.in_dtype.size,
            summary=f"gemv warp/row w{warps} v{point['vector']} u{point['unroll']} split{splits}")


def _device_code(gp: GemmProblem, p: Point, kernel: str, merge: str) -> str:
    ctype = gp.in_dtype.c_type
    acc = gp.acc_ctype
    a_value = load_as_compute(gp.in_dtype, "a.v[e]")
    x_value = load_as_compute(gp.in_dtype, "v.v[e]")
    a_ptr = batch_pointer(f"const {ctype}", "A_b", gp.a.param, gp.a.batched, "M * K")
    x_ptr = batch_pointer(f"const {ctype}", "x_b", gp.b.param, gp.b.batched, "K")
    c_ptr = batch_pointer(gp.out_dtype.c_type, "C_b", gp.out_param, gp.batch != 1, "M")
    merge_code = "" if p["k_splits"] == 1 else f"""

// Stage 2: one thread per output merges its row's K_SPLITS partials in slice order.
__global__ void __launch_bounds__(256) {merge}({kernel_params(gp)}, const {acc}* __restrict__ partials) {{
    const long long row = (long long)blockIdx.x * 256 + threadIdx.x;
    if (row >= M) return;
    {c_ptr}
    const {acc}* mine = partials + (long long)blockIdx.z * K_SPLITS * M + row;
    {acc} sum = mine[0];
    for (int split = 1; split < K_SPLITS; ++split) sum += mine[(long long)split * M];
    C_b[row] = {store_from_compute(gp.out_dtype, output_value(gp, "sum", "row", "0"))};   // N == 1
}}"""
    return f"""{PACK_HELPERS}

{render_epilogue(gp)}
constexpr int WARPS = {p['warps_per_block']};   // rows per block, one per warp
constexpr int VEC = {p['vector']};     // elements per load
constexpr int UNROLL = {p['unroll']};  // loads in flight per lane
constexpr int K_SPLITS = {p['k_splits']};   // slices of each row (grid y)
constexpr int FLUSH_TRIPS = {max(1, FLUSH_ELEMENTS // (p['unroll'] * p['vector']))};  // trips summed in a block before it joins the lane's total

// partials: [batch][K_SPLITS][M] stage-1 sums when K_SPLITS > 1 (else unused: the row is stored).
__global__ void __launch_bounds__(WARPS * 32) {kernel}({kernel_params(gp)}, {acc}* __restrict__ partials) {{
    const int lane = threadIdx.x % 32;
    const long long row = (long long)blockIdx.x * WARPS + threadIdx.x / 32;
    if (row >= M) return;   // the whole warp shares `row`: it leaves together, and no barrier follows
    {a_ptr}
    {x_ptr}
    const {ctype}* a_row = A_b + row * K;
    const long long packs = K / VEC;   // VEC divides K (a design constraint)
    const long long slice = (packs + K_SPLITS - 1) / K_SPLITS;
    const long long begin = blockIdx.y * slice;
    const long long end = begin + slice < packs ? begin + slice : packs;
    {acc} sum = 0, dropped = 0;   // the lane's total, and the rounding error its folds dropped
    for (long long outer = begin + lane; outer < end; outer += 32 * UNROLL * FLUSH_TRIPS) {{
        {acc} block = 0;
        for (int trip = 0; trip < FLUSH_TRIPS; ++trip) {{
            const long long first = outer + trip * 32 * UNROLL;
            if (first >= end) break;
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {{
                const long long pack = first + u * 32;
                if (pack < end) {{
                    const Pack<{ctype}, VEC> a = load_pack<{ctype}, VEC>(a_row, pack);
                    const Pack<{ctype}, VEC> v = load_pack<{ctype}, VEC>(x_b, pack);
#pragma unroll
                    for (int e = 0; e < VEC; ++e) block += ({acc})({a_value}) * ({acc})({x_value});
                }}
            }}
        }}
        // TwoSum: s + e == sum + block exactly (nvcc keeps this order: no fast-math reassociation)
        const {acc} s = sum + block, block_part = s - sum;
        dropped += (sum - (s - block_part)) + (block - block_part);
        sum = s;
    }}
    sum += dropped;
    // Every lane of the warp reaches here (rows are warp-uniform), so full-mask shuffles are safe.
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane != 0) return;
    if (K_SPLITS > 1) {{
        partials[((long long)blockIdx.z * K_SPLITS + blockIdx.y) * M + row] = sum;
        return;
    }}
    {c_ptr}
    {store(gp, "sum", "row", "0")}
}}{merge_code}"""


SKETCHES: list[Sketch] = [WarpPerRowGemv()]

SAMPLE_INTENTS: list[str] = [
    "y = A @ x; A: f32[8192, 8192]; x: f32[8192, 1]",
    "y = A @ x; A: f32[1000, 999]; x: f32[999, 1]",
    "y = relu(A @ x + b); A: f16[4096, 4096]; x: f16[4096, 1]; b: f16[4096, 1]",
    "y = A @ x; A: bf16[8, 512, 1024]; x: bf16[8, 1024, 1]",
    "y = A @ x; A: f32[M, 768]; x: f32[768, 1]; M=777",
    "y = A @ x; A: f32[2048, 1048576]; x: f32[1048576, 1]",
]
