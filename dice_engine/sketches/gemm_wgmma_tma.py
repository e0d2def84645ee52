"""GEMM on Hopper tensor cores with TMA loads and warp-specialized producer/consumer warpgroups.

The block is one producer warpgroup and 1–2 consumer warpgroups. One producer thread walks K:
for each 64-deep slice it waits until the consumers have released the slice's stage (an
`empty` mbarrier), announces the stage's byte count on its `full` mbarrier and asks the tensor
memory accelerator (TMA, `cp.async.bulk.tensor`) for the A and B tiles; the TMA writes them in
the 128-byte-swizzle layout that `gemm.wgmma` builds by hand (see gemm_wgmma.py), zero-fills
past the matrix edges and completes the `full` barrier's transaction count when they land.
Consumer warpgroup g owns rows [g·BM/C, (g+1)·BM/C) of the block tile: it waits on `full`,
issues the slice's `wgmma.mma_async` group from the shared-memory descriptors, and once the
previous slice's group is done (`wgmma.wait_group 1`) releases that slice's stage. No thread
copies operand data and no block-wide barrier runs in the main loop, so the consumers issue
only tensor-core work while up to STAGES-1 slices are in flight.

Tiles are numbered batch by batch, and within a batch in groups of GROUP_M block rows walked
column by column, so that blocks running at the same time share A rows and B columns in L2.
With `persistent` = 1 the grid is one block per SM and each block loops over tiles (tile
`blockIdx.x`, then every `gridDim.x`-th): the producer runs on into the next tile's slices
while the consumers store the previous tile, and the ring's slice counter runs across tiles.
With 0 every tile is its own block. With `pingpong` = 1 (two consumers, persistent) the
consumers take the block's tiles in turn, each a whole BM×BN tile: one stores its tile while the
other multiplies the next, so the tensor cores do not wait for epilogues.

The consumers store straight from their accumulators, through the fused epilogue. A 16-bit
output whose N is a literal multiple of 8 is stored 16 bytes a lane: the epilogue runs in place
first, then the four lanes holding one row's column pairs exchange them by shuffles so that each
writes eight consecutive columns (a warp writes whole 32-byte sectors); other outputs go as pairs.

The launcher describes each operand to the TMA once per launch (`cuTensorMapEncodeTiled`,
reached through `cudaGetDriverEntryPointByVersion`, so the library links no driver library):
rank 2, or rank 3 with the batch as the outer dimension for a batched operand, 64-element
(128-byte) boxes along the contiguous index. Global strides must be multiples of 16 bytes: the
leading dimensions are literal multiples of 8 (as for `gemm.wgmma`). Needs sm_90a.
"""
# ruff: noqa: E501  (CUDA text is kept one generated line per source line, so it reads as it renders)
from __future__ import annotations

import math

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, dim_c, frame, launcher_params, \
    launcher_signature
from .gemm_common import PTX_BEGIN, PTX_END, SMEM_ADDR_HELPER, GemmProblem, Operand, batch_pointer, gemm_problem, \
    kernel_args, kernel_params, output_value, render_epilogue, size_guard, smem_opt_in, tiled_grid
from .gemm_wgmma import BK, DESCRIPTOR_FUNCTION, WGMMA_PTX_HELPERS, WgmmaGemm, fragment_pair_stores, major, \
    multiply_stage, operand_constants, wgmma_helper

_ALIGN = 1024   # the 128-byte swizzle pattern repeats every 8 rows of 128 B: tiles start on 1024 B
_BOX = 64       # elements per TMA box along the contiguous index: one 128-byte swizzle row
GROUP_M = 8     # block rows per rasterization group (consecutive tiles share operands in L2)


def _warpgroup_rows(p: Point) -> int:
    return p["block_m"] if p["pingpong"] else p["block_m"] // p["consumers"]


def _smem_bytes(p: Point) -> int:
    return p["stages"] * (p["block_m"] + p["block_n"]) * BK * 2 + _ALIGN   # + slack to align the base


class WgmmaTmaGemm(Sketch):
    name = "gemm.wgmma_tma"
    pattern = "gemm"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        # the same operands as the cp.async wgmma kernel: f16/bf16, sm_90a, 16-byte-aligned rows
        return WgmmaGemm().unsupported(problem, arch)

    # -- design space ---------------------------------------------------------------------------

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        tokens = [
            Token("block_m", (64, 128, 256), "rows of C per block (BM)", (Role.TILE,)),
            Token("block_n", (64, 128, 256), "columns of C per block (BN, the wgmma N)", (Role.TILE,)),
            Token("consumers", (1, 2), "consumer warpgroups splitting BM (one producer warpgroup besides)",
                  (Role.THREADS,)),
            Token("stages", (3, 4, 5, 6), "shared-memory stages of the TMA ring (STAGES-1 slices in flight)",
                  (Role.PIPELINE,)),
            Token("persistent", (0, 1), "1: one block per SM looping over tiles, the next tile's loads "
                  "overlapping this one's stores; 0: one block per tile", ()),
            Token("pingpong", (0, 1), "1: the two consumers take turns on whole tiles, one storing while the "
                  "other multiplies; 0: they share each tile's rows", ()),
        ]

        def warpgroup_rows(p: Point) -> str | None:
            rows = _warpgroup_rows(p)
            if p["block_m"] % p["consumers"] or rows % 64 or rows > 128:
                return f"{rows} rows per consumer warpgroup (64 or 128 wanted: one or two m64 steps)"
            return None

        def pingpong(p: Point) -> str | None:
            if p["pingpong"] and (p["consumers"] != 2 or not p["persistent"]):
                return "pingpong needs two consumer warpgroups in a persistent block"
            return None

        def accumulators(p: Point) -> str | None:
            regs = _warpgroup_rows(p) // 64 * p["block_n"] // 2
            return None if regs <= 128 else f"{regs} accumulator registers per thread (at most 128)"

        def shared_memory(p: Point) -> str | None:
            smem = _smem_bytes(p) + _ALIGN   # + the mbarriers (static, aligned)
            return None if smem <= arch.smem_per_block_optin else \
                f"{smem} B of shared memory (opt-in limit {arch.smem_per_block_optin})"

        return DesignSpace(tokens, [pingpong, warpgroup_rows, accumulators, shared_memory])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        gp = gemm_problem(problem)
        space = self.space(problem, arch)
        outputs = gp.hint(gp.M) * gp.hint(gp.N) * gp.hint(gp.batch)
        if outputs >= 128 * 256 * arch.sms:   # a full wave of 128x256 tiles: CUTLASS's Hopper default shape
            shapes = [(128, 256, 2, 4), (128, 128, 2, 6)]
        elif outputs >= 128 * 128 * arch.sms:
            shapes = [(128, 128, 2, 6)]
        else:
            shapes = [(64, 128, 1, 6), (64, 64, 1, 6)]
        return space.first_legal({"block_m": bm, "block_n": bn, "consumers": c, "stages": s, "persistent": 1,
                                  "pingpong": 0} for bm, bn, c, s in shapes)

    # -- rendering ------------------------------------------------------------------------------

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        gp = gemm_problem(problem)
        kernel = f"{name}_kernel"
        threads = 128 * (point["consumers"] + 1)
        smem = _smem_bytes(point)
        qualified = f"dice_{name}::{kernel}"
        params = launcher_params(problem)
        launcher = _launcher(gp, launcher_signature(name, params), name, qualified, point, threads, smem)
        strategy = (f"{gp.in_dtype} GEMM on Hopper tensor cores (wgmma.m64n{point['block_n']}k16 from shared-memory "
                    f"descriptors, fp32 accumulate), {point['block_m']}x{point['block_n']}x{BK} block tiles, "
                    f"a TMA producer warpgroup and {point['consumers']} consumer warpgroup(s) meeting on mbarriers "
                    f"over a {point['stages']}-stage ring in the 128-byte swizzle layout, A {major('A', gp.a)}-major, "
                    f"B {major('B', gp.b)}-major{', fused epilogue' if gp.has_epilogue else ''}; "
                    f"build for sm_90a (-gencode=arch=compute_90a,code=sm_90a)")
        source = frame(name=name, strategy=strategy, tokens=point, device_code=_device_code(gp, point, kernel),
                       launcher_code=launcher)
        tiles = math.prod(tiled_grid(gp, point))
        blocks = min(tiles, arch.sms) if point["persistent"] else tiles
        return RenderedKernel(
            sketch=self.name, tokens=dict(point), source=source, kernel_names=[qualified],
            launcher=launcher, params=params, launches=[Launch(kernel, (blocks, 1, 1), (threads, 1, 1), smem)],
            async_slices=point["stages"] - 1,
            summary=f"wgmma+tma {point['block_m']}x{point['block_n']}x{BK} c{point['consumers']} "
                    f"{point['stages']}st{' persistent' if point['persistent'] else ''}"
                    f"{' pingpong' if point['pingpong'] else ''}",
            arch_suffix="a")


# ---------------------------------------------------------------------------------------------
# Host side: the tensor maps

def _tile_map_call(which: str, op: Operand, gp: GemmProblem) -> str:
    """`encode_tile_map(...)` for one operand: its rank, the (inner, outer) extents of its storage
    (inner contiguous), the batch, and the box (64 along the contiguous index; the whole tile's rows
    for a K-major operand, 64 k-rows for an M/N-major one, filled panel by panel)."""
    k_major = major(which, op) == "K"
    mn, block = (gp.M, "BM") if which == "A" else (gp.N, "BN")
    inner, outer = (gp.K, mn) if k_major else (mn, gp.K)
    rank = 3 if op.batched else 2
    box_outer = block if k_major else str(BK)
    return (f"encode_tile_map(&{which.lower()}_map, {op.input_name}, {rank}, (unsigned long long)({dim_c(inner)}), "
            f"(unsigned long long)({dim_c(outer)}), (unsigned long long)({dim_c(gp.batch)}), {_BOX}, {box_outer})")


def _launcher(gp: GemmProblem, signature: str, name: str, kernel: str, point: Point, threads: int, smem: int) -> str:
    opt_in = smem_opt_in(kernel, smem)
    blocks = "tiles"
    if point["persistent"]:
        opt_in += ("    static int sms = 0;   // one block per SM\n"
                   "    if (sms == 0) {\n"
                   "        int device = 0;\n"
                   "        cudaGetDevice(&device);\n"
                   "        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);\n"
                   "    }\n")
        blocks = "(tiles < sms ? tiles : sms)"
    return (f"{signature} {{\n"
            f"{size_guard(gp)}"
            f"    using dice_{name}::BM; using dice_{name}::BN; using dice_{name}::encode_tile_map;\n"
            f"    dice_{name}::TmaMap a_map, b_map;   // the TMA's view of A and B, rebuilt per launch (pointers change)\n"
            f"    if (!{_tile_map_call('A', gp.a, gp)}) return;\n"
            f"    if (!{_tile_map_call('B', gp.b, gp)}) return;\n"
            f"{opt_in}"
            f"    const int batches = (int)({dim_c(gp.batch)});\n"
            f"    const int tiles = (({dim_c(gp.M)} + BM - 1) / BM) * (({dim_c(gp.N)} + BN - 1) / BN) * batches;\n"
            f"    {kernel}<<<{blocks}, {threads}, {smem}, stream>>>(a_map, b_map, {kernel_args(gp)}, batches);\n}}\n")


_TMA_HOST = r"""
// The driver's CUtensorMap: 128 opaque bytes, passed to the kernel by value (__grid_constant__).
struct alignas(128) TmaMap {
    unsigned long long opaque[16];
};

// cuTensorMapEncodeTiled's signature with its enums as int (the driver ABI), so that no driver
// header or library is needed: the runtime hands the entry point over.
typedef int (*EncodeTiled)(TmaMap*, int, unsigned, void*, const unsigned long long*, const unsigned long long*,
                           const unsigned*, const unsigned*, int, int, int, int);

// A tensor map of 16-bit elements, `rank` 2 ([outer][inner]) or 3 ([batch][outer][inner]), contiguous
// rows of `inner` elements, boxes of box_inner x box_outer in the 128-byte swizzle, zero fill past the
// edges. False when the driver has no TMA or refuses the description.
static bool encode_tile_map(TmaMap* map, const void* base, unsigned rank, unsigned long long inner,
                            unsigned long long outer, unsigned long long batch, unsigned box_inner, unsigned box_outer) {
    static EncodeTiled encode = nullptr;
    if (encode == nullptr) {
        void* entry = nullptr;
        cudaDriverEntryPointQueryResult found;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault, &found)
                != cudaSuccess || found != cudaDriverEntryPointSuccess)
            return false;
        encode = reinterpret_cast<EncodeTiled>(entry);
    }
    const unsigned long long dims[3] = {inner, outer, batch};
    const unsigned long long strides[2] = {inner * 2, inner * outer * 2};   // bytes between rows, matrices
    const unsigned box[3] = {box_inner, box_outer, 1}, element_strides[3] = {1, 1, 1};
    const int uint16 = 1, no_interleave = 0, swizzle_128b = 3, l2_promote_256b = 3, zero_fill = 0;
    return encode(map, uint16, rank, const_cast<void*>(base), dims, strides, box, element_strides, no_interleave,
                  swizzle_128b, l2_promote_256b, zero_fill) == 0;
}
"""

_TMA_PTX = r"""
// mbarriers (PTX ISA 8.0): a phase completes when its arrivals and its transaction bytes are in.
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(smem_addr(bar)), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the TMA unit (the async proxy).
__device__ __forceinline__ void fence_barrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(smem_addr(bar)) : "memory");
}
// Returns once the phase of the given parity has completed.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
    unsigned done = 0;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
    } while (!done);
}

// TMA tile loads into shared memory; the bytes complete `bar`'s transaction count.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const TmaMap* map, int c0, int c1, uint64_t* bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const TmaMap* map, int c0, int c1, int c2, uint64_t* bar) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
                 :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar)) : "memory");
}
"""


def _tile_loads(which: str, op: Operand) -> str:
    """The producer's TMA requests for one operand's slice kt into its stage tile."""
    tile, origin, extent = (("a_tile", "m0", "BM") if which == "A" else ("b_tile", "n0", "BN"))
    coords = (lambda c0, c1: f"{c0}, {c1}, batch") if op.batched else (lambda c0, c1: f"{c0}, {c1}")
    load = "tma_load_3d" if op.batched else "tma_load_2d"
    bar = "&full_bar[stage]"
    if major(which, op) == "K":   # one box: the tile's rows, 64 k each
        return f"                    {load}({tile}, &{which.lower()}_map, {coords('kt * BK', origin)}, {bar});\n"
    return (f"                    #pragma unroll\n"   # M/N-major: one 64-wide panel of BK k-rows per box
            f"                    for (int panel = 0; panel < {extent} / 64; ++panel)\n"
            f"                        {load}({tile} + panel * BK * 128, &{which.lower()}_map, "
            f"{coords(f'{origin} + panel * 64', 'kt * BK')}, {bar});\n")


def _device_code(gp: GemmProblem, p: Point, kernel: str) -> str:
    a_major, b_major = major("A", gp.a), major("B", gp.b)
    consts = (f"constexpr int BM = {p['block_m']}, BN = {p['block_n']}, BK = {BK};  // block tile\n"
              f"constexpr int CONSUMERS = {p['consumers']}, THREADS = 128 * (CONSUMERS + 1);  // + the producer warpgroup\n"
              f"constexpr int PINGPONG = {p['pingpong']};  // 1: consumers take whole tiles in turn; 0: they split each tile's rows\n"
              f"constexpr int WG_M = PINGPONG ? BM : BM / CONSUMERS, MI = WG_M / 64;  // rows per consumer warpgroup, m64 steps\n"
              f"constexpr int READERS = PINGPONG ? 4 : CONSUMERS * 4;  // warps that read each slice\n"
              f"constexpr int STAGES = {p['stages']};\n"
              f"constexpr int GROUP_M = {GROUP_M};  // block rows per rasterization group\n"
              f"constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2, STAGE_BYTES = A_BYTES + B_BYTES;\n"
              f"{operand_constants(a_major, b_major)}")
    helpers = (f"{_TMA_HOST}\n{PTX_BEGIN}{SMEM_ADDR_HELPER}{_TMA_PTX}{WGMMA_PTX_HELPERS}"
               f"{wgmma_helper(gp.in_dtype.name, p['block_n'])}{PTX_END}\n{DESCRIPTOR_FUNCTION}")
    return f"""{consts}{helpers}
{render_epilogue(gp)}
__global__ void __launch_bounds__(THREADS, 1) {kernel}(const __grid_constant__ TmaMap a_map, const __grid_constant__ TmaMap b_map,
                                                      {kernel_params(gp)}, int batches) {{
    extern __shared__ __align__(1024) uint8_t smem_raw[];   // STAGES x (A tile, B tile)
    __shared__ __align__(8) uint64_t full_bar[STAGES];    // stage filled: 1 arrival + STAGE_BYTES of TMA writes
    __shared__ __align__(8) uint64_t empty_bar[STAGES];   // stage read: one arrival per reading warp
{"    __shared__ __align__(8) uint64_t turn_bar[2];   // consumer c finished its tile's main loop (pingpong)" + chr(10) if p["pingpong"] else ""}    const uint32_t smem_base = (smem_addr(smem_raw) + 1023) & ~1023u;   // swizzle atoms start on 1024 B
    const int m_tiles = (M + BM - 1) / BM, n_tiles = (N + BN - 1) / BN;
    const int tiles = m_tiles * n_tiles * batches;
    const int k_tiles = (K + BK - 1) / BK;
    // Tile number -> (batch, first row, first column): per batch, groups of GROUP_M block rows
    // walked column by column.
    auto locate = [&](int tile, int& batch, int& m0, int& n0) {{
        batch = tile / (m_tiles * n_tiles);
        const int t = tile % (m_tiles * n_tiles), group = t / (GROUP_M * n_tiles), first = group * GROUP_M;
        const int rows = m_tiles - first < GROUP_M ? m_tiles - first : GROUP_M;
        m0 = (first + (t % (GROUP_M * n_tiles)) % rows) * BM;
        n0 = ((t % (GROUP_M * n_tiles)) / rows) * BN;
    }};
    if (threadIdx.x == 0) {{
        #pragma unroll
        for (int s = 0; s < STAGES; ++s) {{
            mbar_init(&full_bar[s], 1);
            mbar_init(&empty_bar[s], READERS);
        }}{_turn_init(p)}
        fence_barrier_init();
    }}
    __syncthreads();

    if (threadIdx.x < 128) {{   // the producer warpgroup: one thread feeds the ring, the rest exit
        if (threadIdx.x == 0) {{
            int it = 0;   // slices through the ring so far, over all of this block's tiles
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {{
                int batch, m0, n0;
                locate(tile, batch, m0, n0);
                for (int kt = 0; kt < k_tiles; ++kt, ++it) {{
                    const int stage = it % STAGES;
                    if (it >= STAGES) mbar_wait(&empty_bar[stage], (it / STAGES - 1) & 1);   // its last slice was read
                    mbar_arrive_expect_tx(&full_bar[stage], STAGE_BYTES);
                    const uint32_t a_tile = smem_base + stage * STAGE_BYTES, b_tile = a_tile + A_BYTES;
{_tile_loads("A", gp.a)}{_tile_loads("B", gp.b)}                }}
            }}
        }}
        return;
    }}

    // A consumer warpgroup.
    const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;   // warp within its warpgroup
    const int consumer = threadIdx.x / 128 - 1;
    const int wg_m0 = PINGPONG ? 0 : consumer * WG_M;   // this warpgroup's first row in the block tile
    float acc[MI][BN / 2];
{multiply_stage(a_major, b_major)}

    // This block's j-th tile is its slices j*k_tiles .. (j+1)*k_tiles-1 of the producer's ring order.
    for (int j = PINGPONG ? consumer : 0; blockIdx.x + j * gridDim.x < tiles; j += PINGPONG ? 2 : 1) {{
        int batch, m0, n0;
        locate(blockIdx.x + j * gridDim.x, batch, m0, n0);
        #pragma unroll
        for (int mi = 0; mi < MI; ++mi)
            #pragma unroll
            for (int i = 0; i < BN / 2; ++i) acc[mi][i] = 0.0f;
{_turn_wait(p)}        int it = j * k_tiles;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {{
            const int stage = it % STAGES;
            mbar_wait(&full_bar[stage], (it / STAGES) & 1);   // slice kt has landed
            multiply(stage);
            wgmma_wait<1>();   // the previous slice's multiplications are done; this one's may still run
            __syncwarp();
            if (kt > 0 && lane == 0) mbar_arrive(&empty_bar[(it - 1) % STAGES]);   // hand its stage back
        }}
{_turn_pass(p)}        wgmma_wait<0>();
        #pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_registers(acc[mi]);
        __syncwarp();
        if (k_tiles > 0 && lane == 0) mbar_arrive(&empty_bar[(it - 1) % STAGES]);   // the tile's last slice

        // Epilogue straight from the accumulator fragments ({gp.in_dtype.c_type} operands, fp32 accumulators),
        // while the producer fills the ring with the next tile's slices.
        {batch_pointer(gp.out_dtype.c_type, "C_b", gp.out_param, gp.batch != 1, "M * N", "batch")}
{_epilogue_loops(gp)}    }}
}}
"""


# Pingpong: consumer c starts the main loop of tile j only once the other consumer has waited for
# every slice of tile j-1. Then each slice's `full` barrier is at most one phase behind the phase
# its reader waits for (a parity wait cannot tell phases two apart), and the two main loops
# follow each other on the tensor cores while the epilogues overlap them.
def _turn_init(p: Point) -> str:
    return ("\n        mbar_init(&turn_bar[0], 4);\n"
            "        mbar_init(&turn_bar[1], 4);" if p["pingpong"] else "")


def _turn_wait(p: Point) -> str:
    return ("        if (j > 0) mbar_wait(&turn_bar[consumer ^ 1], ((j - 1) / 2) & 1);   // the other's tile j-1 is in\n"
            if p["pingpong"] else "")


def _turn_pass(p: Point) -> str:
    return ("        __syncwarp();\n"
            "        if (lane == 0) mbar_arrive(&turn_bar[consumer]);   // the other consumer may start its tile\n"
            if p["pingpong"] else "")


def _epilogue_loops(gp: GemmProblem) -> str:
    """The consumer's stores of its accumulators through the epilogue. A 16-bit output whose N is
    a literal multiple of 8 is stored 16 bytes a lane (`quad_stores`); any other one as pairs."""
    if gp.out_dtype.size == 2 and gp.is_multiple(gp.N, 8):
        return _quad_stores(gp)
    return fragment_pair_stores(gp, "batch", "        ")


def _quad_stores(gp: GemmProblem) -> str:
    """16-byte stores of a 16-bit output. The four lanes of a quad hold columns 8ni + 2q, +1 of one
    row (q = lane % 4) for every ni; per group of four ni, each lane packs its four output pairs,
    and four shuffle rounds within the quad hand lane q the pairs of ni = 4g + q from every lane:
    eight consecutive columns, one 16-byte store (a warp writes 8 rows x 64 bytes, whole sectors,
    instead of 8 rows x 16 bytes per pair store)."""
    pack = {"f16": "__floats2half2_rn", "bf16": "__floats2bfloat162_rn"}[gp.out_dtype.name]
    # the fused epilogue first, in place on the accumulators (its temporaries do not meet the shuffles')
    in_place = ""
    if gp.has_epilogue:
        v0 = output_value(gp, "acc[mi][i]", "row", "col", "batch")
        v1 = output_value(gp, "acc[mi][i + 1]", "row", "col + 1", "batch")
        in_place = f"""        #pragma unroll
        for (int mi = 0; mi < MI; ++mi)
            #pragma unroll
            for (int i = 0; i < BN / 2; i += 2) {{   // a pair: row 16 warp + lane/4 (+8), columns 8(i/4) + 2(lane%4), +1
                const int row = m0 + wg_m0 + mi * 64 + warp * 16 + lane / 4 + ((i / 2) % 2) * 8;
                const int col = n0 + (i / 4) * 8 + (lane % 4) * 2;
                const float first = {v0};
                acc[mi][i + 1] = {v1};
                acc[mi][i] = first;
            }}
"""
    return in_place + f"""        const int q = lane % 4;
        auto pick = [](const uint32_t (&w)[4], int i) {{ return i == 0 ? w[0] : i == 1 ? w[1] : i == 2 ? w[2] : w[3]; }};
        #pragma unroll
        for (int mi = 0; mi < MI; ++mi)
            #pragma unroll
            for (int upper = 0; upper < 2; ++upper) {{   // rows lane/4, then lane/4 + 8
                const int row = m0 + wg_m0 + mi * 64 + warp * 16 + lane / 4 + upper * 8;
                #pragma unroll
                for (int g = 0; g < BN / 32; ++g) {{
                    uint32_t packed[4];   // this lane's output pairs for ni = 4g .. 4g+3
                    #pragma unroll
                    for (int s = 0; s < 4; ++s) {{
                        const int ni = 4 * g + s;
                        const auto pair = {pack}(acc[mi][ni * 4 + upper * 2], acc[mi][ni * 4 + upper * 2 + 1]);
                        packed[s] = *reinterpret_cast<const uint32_t*>(&pair);
                    }}
                    uint32_t mine[4] = {{0, 0, 0, 0}};   // columns 8(4g + q) + 2r, +1 from lane r of the quad
                    #pragma unroll
                    for (int s = 0; s < 4; ++s) {{   // from lane r = (q + s) % 4, which sends its pair for ni = 4g + q
                        const int r = (q + s) & 3;
                        const uint32_t got = __shfl_sync(0xffffffffu, pick(packed, (q - s) & 3), (lane & ~3) | r);
                        mine[0] = r == 0 ? got : mine[0];
                        mine[1] = r == 1 ? got : mine[1];
                        mine[2] = r == 2 ? got : mine[2];
                        mine[3] = r == 3 ? got : mine[3];
                    }}
                    const int col = n0 + (4 * g + q) * 8;
                    if (row < M && col < N)
                        *reinterpret_cast<uint4*>(&C_b[(long long)row * N + col]) = make_uint4(mine[0], mine[1], mine[2], mine[3]);
                }}
            }}
"""


SKETCHES: list[Sketch] = [WgmmaTmaGemm()]

SAMPLE_INTENTS: list[str] = [
    "C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]",
    "C = A @ W.T; A: bf16[2048, 1024]; W: bf16[4096, 1024]",
    "C = A @ B; A: f16[16, 512, 256]; B: f16[16, 256, 512]",
    "C = A @ B; A: bf16[4, 300, 256]; B: bf16[256, 200]",
    "C = A.T @ B; A: f16[1024, 2048]; B: f16[1024, 512]",
    "C = A.T @ B.T; A: bf16[1000, 1000]; B: bf16[1000, 1000]",
    "C = A @ B; A: f16[M, 512]; B: f16[512, 1024]; M=777",
    "y = gelu(x @ W + b); x: bf16[8192, 1024]; W: bf16[1024, 4096]; b: bf16[4096]",
    "y = relu(A @ B) * 0.5 + R; A: f16[1000, 1024]; B: f16[1024, 1000]; R: f16[1000, 1000]",
]
