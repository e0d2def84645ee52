"""GEMM on Hopper tensor cores (f16/bf16 operands, fp32 accumulation) with `wgmma.mma_async`.

Each block computes a BM×BN tile of C with 1–2 warpgroups (128 threads each); warpgroup g owns
rows [g·BM/WGS, (g+1)·BM/WGS) in 64-row `wgmma.m64nBNk16` steps, both operands read by the
tensor cores straight from shared memory through matrix descriptors. Shared memory holds each
operand tile in the canonical 128-byte-swizzle layout: 64-element (128-byte) rows along the
operand's contiguous index, 16-byte chunk c of row r stored at chunk c ^ (r % 8), rows in
"panels" of 64 contiguous elements (a K-major tile is one panel: BK = 64). A K-major operand
(A row-major, B given as `W.T`) is read as is; an M/N-major one (A.T, row-major B) with the
descriptor's transpose bit. K slices arrive by `cp.async` (16 B, zero-filled past the edges)
through a STAGES-deep ring: STAGES-2 slices in flight while one `wgmma` group runs, so a stage
is refilled only after every warpgroup has waited for the multiplications that read it.
Needs the sm_90a target (`RenderedKernel.arch_suffix`) and 16-byte rows (leading dimensions
that are literal multiples of 8); other GEMMs fall back to `gemm.mma_sync`.
"""
# ruff: noqa: E501  (CUDA text is kept one generated line per source line, so it reads as it renders)
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, frame, launcher_params, \
    launcher_signature
from .gemm_common import CP_ASYNC_HELPERS, PTX_BEGIN, PTX_END, SMEM_ADDR_HELPER, GemmProblem, Operand, \
    batch_pointer, gemm_problem, kernel_params, operand_geometry, pair_store, read_problem, render_epilogue, \
    tiled_grid, tiled_launcher

BK = 64                 # K per stage: one 128-byte swizzle row of 16-bit elements
_CHUNK = 8              # 16-bit elements per 16-byte copy
_ALIGN = 1024           # the 128-byte swizzle pattern repeats every 8 rows: tiles start on 1024 B

# Byte offset of 16-byte chunk `chunk` of tile row `row` in a tile of `rows` rows (see the module
# doc): panels of 64 elements along the contiguous index, 128-byte rows, chunks XOR-swizzled.
SWIZZLED_OFFSET = "(chunk / 8) * (rows * 128) + row * 128 + ((chunk % 8) ^ (row % 8)) * 16"

# Where one wgmma's operand starts in its stage tile, as C over kk (k16 step) and mn0 (the first
# row of A / column of B it reads): a K-major tile advances 32 bytes per k16 step within its rows;
# an MN-major tile advances 16 rows of 128 bytes and picks the panel holding mn0.
DESCRIPTOR_START = {"K": "mn0 * 128 + kk * 32", "MN": "(mn0 / 64) * (BK * 128) + kk * 16 * 128"}
# Leading-dimension byte offset: unused by a K-major swizzled operand (16 by convention); between
# 64-element panels for an MN-major one. The stride byte offset is 8 rows of 128 bytes for both.
DESCRIPTOR_LBO = {"K": "16", "MN": "BK * 128"}
DESCRIPTOR_SBO = "1024"


def major(which: str, op: Operand) -> str:
    """"K" when the operand's contiguous index is k (A row-major, B stored N×K), else "MN"."""
    return "K" if (which, op.layout) in (("A", "row"), ("B", "col")) else "MN"


def _warpgroup_rows(p: Point) -> int:
    return p["block_m"] // p["warpgroups"]


def _smem_bytes(p: Point) -> int:
    return p["stages"] * (p["block_m"] + p["block_n"]) * BK * 2 + _ALIGN   # + slack to align the base


class WgmmaGemm(Sketch):
    name = "gemm.wgmma"
    pattern = "gemm"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        gp = read_problem(problem)
        if isinstance(gp, str):
            return gp
        if gp.in_dtype.name not in ("f16", "bf16"):
            return f"wgmma GEMM serves f16/bf16 operands, not {gp.in_dtype}"
        if not arch.has_wgmma:
            return f"wgmma exists only on sm_90a (Hopper), not on {arch.name}"
        for which, op in (("A", gp.a), ("B", gp.b)):
            ld = op.leading_dim(which, gp)
            if not gp.is_multiple(ld, _CHUNK):
                return (f"wgmma tiles are filled by 16-byte copies: {which}'s leading dimension ({ld}) "
                        f"must be a literal multiple of 8")
        return None

    # -- design space ---------------------------------------------------------------------------

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        tokens = [
            Token("block_m", (64, 128, 256), "rows of C per block (BM)", (Role.TILE,)),
            Token("block_n", (64, 128, 256), "columns of C per block (BN, the wgmma N)", (Role.TILE,)),
            Token("warpgroups", (1, 2), "consumer warpgroups splitting BM (128 threads each)", (Role.THREADS,)),
            Token("stages", (3, 4, 5), "shared-memory pipeline depth (STAGES-2 slices in flight)", (Role.PIPELINE,)),
        ]

        def warpgroup_rows(p: Point) -> str | None:
            rows = _warpgroup_rows(p)
            if p["block_m"] % p["warpgroups"] or rows % 64 or rows > 128:
                return f"{rows} rows per warpgroup (64 or 128 wanted: one or two m64 steps)"
            return None

        def accumulators(p: Point) -> str | None:
            regs = _warpgroup_rows(p) // 64 * p["block_n"] // 2
            return None if regs <= 128 else f"{regs} accumulator registers per thread (at most 128)"

        def shared_memory(p: Point) -> str | None:
            smem = _smem_bytes(p)
            return None if smem <= arch.smem_per_block_optin else \
                f"{smem} B of shared memory (opt-in limit {arch.smem_per_block_optin})"

        return DesignSpace(tokens, [warpgroup_rows, accumulators, shared_memory])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        gp = gemm_problem(problem)
        space = self.space(problem, arch)
        tiles = gp.hint(gp.M) * gp.hint(gp.N) * gp.hint(gp.batch)
        if tiles >= 128 * 256 * arch.sms:   # enough 128x256 tiles for every SM: CUTLASS's Hopper default
            shapes = [(128, 256, 2, 4), (128, 128, 2, 5)]
        elif tiles >= 128 * 128 * arch.sms:
            shapes = [(128, 128, 2, 5)]
        else:
            shapes = [(64, 128, 1, 4), (64, 64, 1, 4)]
        return space.first_legal({"block_m": bm, "block_n": bn, "warpgroups": wgs, "stages": stages}
                                 for bm, bn, wgs, stages in shapes)

    # -- rendering ------------------------------------------------------------------------------

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        gp = gemm_problem(problem)
        kernel = f"{name}_kernel"
        threads = 128 * point["warpgroups"]
        smem = _smem_bytes(point)
        qualified = f"dice_{name}::{kernel}"
        params = launcher_params(problem)
        launcher = tiled_launcher(gp, launcher_signature(name, params), qualified, point, threads, smem)
        strategy = (f"{gp.in_dtype} GEMM on Hopper tensor cores (wgmma.m64n{point['block_n']}k16 from shared-memory "
                    f"descriptors, fp32 accumulate), {point['block_m']}x{point['block_n']}x{BK} block tiles over "
                    f"{point['warpgroups']} warpgroup(s), {point['stages']}-stage cp.async ring in the 128-byte "
                    f"swizzle layout, A {major('A', gp.a)}-major, B {major('B', gp.b)}-major"
                    f"{', fused epilogue' if gp.has_epilogue else ''}; "
                    f"build for sm_90a (-gencode=arch=compute_90a,code=sm_90a)")
        source = frame(name=name, strategy=strategy, tokens=point, device_code=_device_code(gp, point, kernel),
                       launcher_code=launcher)
        grid = tiled_grid(gp, point)
        return RenderedKernel(
            sketch=self.name, tokens=dict(point), source=source, kernel_names=[qualified],
            launcher=launcher, params=params, launches=[Launch(kernel, grid, (threads, 1, 1), smem)],
            async_slices=point["stages"] - 2,
            summary=f"wgmma {point['block_m']}x{point['block_n']}x{BK} wg{point['warpgroups']} "
                    f"{point['stages']}st",
            arch_suffix="a")


# ---------------------------------------------------------------------------------------------
# CUDA text

# The wgmma wrappers every wgmma kernel uses (the cp.async ring adds its own below).
WGMMA_PTX_HELPERS = r"""

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory"); }

// Keeps the compiler from moving accumulator reads/writes across the asynchronous wgmma.
template <int N>
__device__ __forceinline__ void fence_registers(float (&r)[N]) {
    #pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i]) :: "memory");
}
"""

_CP_ASYNC_RING_HELPERS = SMEM_ADDR_HELPER + CP_ASYNC_HELPERS + r"""
// Shared memory written through the generic proxy (cp.async) is read by wgmma through the async
// proxy: each writer fences before the barrier that publishes the tile.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
"""


def wgmma_helper(dtype: str, n: int) -> str:
    ab = "bf16" if dtype == "bf16" else "f16"
    regs = n // 2
    d_list = ", ".join(f"%{i}" for i in range(regs))
    outputs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    return (f"\n// D(64x{n}, f32, this warpgroup) += A(64x16) * B(16x{n}), both from shared memory via descriptors.\n"
            f"// Thread t of warp w holds rows 16w + t/4 (+8 for d[i] with i%4 >= 2), columns 8(i/4) + 2(t%4) + i%2.\n"
            f"__device__ __forceinline__ void wgmma_m64k16(float (&d)[{regs}], uint64_t a_desc, uint64_t b_desc) {{\n"
            f"    asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{regs + 2}, 0;\\n\"\n"
            f"                 \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ab}.{ab} \"\n"
            f"                 \"{{{d_list}}}, \"\n"
            f"                 \"%{regs}, %{regs + 1}, p, 1, 1, %{regs + 3}, %{regs + 4};\\n}}\\n\"\n"
            f"                 : {outputs}\n"
            f"                 : \"l\"(a_desc), \"l\"(b_desc), \"r\"(1), \"n\"(TRANS_A), \"n\"(TRANS_B));\n"
            f"}}\n")


DESCRIPTOR_FUNCTION = r"""
// Matrix descriptor (PTX ISA, wgmma): start address, leading and stride byte offsets (all >> 4),
// base offset 0 (tiles start on 1024 B), swizzle mode 1 = 128-byte.
__device__ __forceinline__ uint64_t descriptor(uint32_t address, uint32_t lbo, uint32_t sbo) {
    return uint64_t((address & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32)
         | (uint64_t(1) << 62);
}
"""


def _copy_async(which: str, op: Operand) -> str:
    """cp.async of this thread's 16-byte chunks of one operand slice into its swizzled tile."""
    g = operand_geometry(which, op)
    o, n = g["outer"], g["inner"]
    return (f"        #pragma unroll\n"
            f"        for (int i = 0; i < {which}_CHUNKS; ++i) {{\n"
            f"            const int idx = threadIdx.x + i * THREADS;\n"
            f"            const int {o} = idx / ({g['inner_extent']} / 8), chunk = idx % ({g['inner_extent']} / 8);   // tile row, 16-byte chunk\n"
            f"            const int g{o} = {g['outer_origin']} + {o}, g{n} = {g['inner_origin']} + chunk * 8;\n"
            f"            const bool valid = g{o} < {g['outer_limit']} && g{n} < {g['inner_limit']};\n"
            f"            const uint16_t* src = valid ? {which}_b + (long long)g{o} * {g['ld']} + g{n} : {which}_b;\n"
            f"            cp_async_16({which.lower()}_tile + swizzled({o}, chunk, {g['outer_extent']}), src, valid);\n"
            f"        }}\n")


def operand_constants(a_major: str, b_major: str) -> str:
    """The constants of the operands' shared-memory layouts: transpose bits and descriptor fields."""
    return (f"constexpr int TRANS_A = {int(a_major == 'MN')}, TRANS_B = {int(b_major == 'MN')};  // A {a_major}-major, B {b_major}-major\n"
            f"// descriptor fields (bytes): leading byte offsets per operand, stride byte offset of both\n"
            f"constexpr uint32_t A_LBO = {DESCRIPTOR_LBO[a_major]}, B_LBO = {DESCRIPTOR_LBO[b_major]}, SBO = {DESCRIPTOR_SBO};\n")


def multiply_stage(a_major: str, b_major: str) -> str:
    """`multiply(stage)`: a warpgroup's wgmmas over one stage's tiles (rows wg_m0.. of A), one commit group."""
    return f"""    auto multiply = [&](int stage) {{   // issue this warpgroup's wgmmas on one stage, as one commit group
        const uint32_t a_tile = smem_base + stage * STAGE_BYTES, b_tile = a_tile + A_BYTES;
        #pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_registers(acc[mi]);
        wgmma_fence();
        #pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {{
            uint64_t b_desc;
            {{
                const int mn0 = 0;
                b_desc = descriptor(b_tile + {DESCRIPTOR_START[b_major]}, B_LBO, SBO);
            }}
            #pragma unroll
            for (int mi = 0; mi < MI; ++mi) {{
                const int mn0 = wg_m0 + mi * 64;
                wgmma_m64k16(acc[mi], descriptor(a_tile + {DESCRIPTOR_START[a_major]}, A_LBO, SBO), b_desc);
            }}
        }}
        wgmma_commit();
        #pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_registers(acc[mi]);
    }};"""


def fragment_pair_stores(gp: GemmProblem, batch: str, indent: str) -> str:
    """Stores of the accumulator fragments, a pair of columns at a time, through the epilogue
    (wgmma's f32 D layout: 16 rows per warp, lane/4 and +8; columns 8ni + 2(lane%4), +1)."""
    body = ("#pragma unroll\n"
            "for (int mi = 0; mi < MI; ++mi)\n"
            "    #pragma unroll\n"
            "    for (int ni = 0; ni < BN / 8; ++ni)\n"
            "        #pragma unroll\n"
            "        for (int upper = 0; upper < 2; ++upper) {   // rows lane/4, then lane/4 + 8\n"
            "            const int row = m0 + wg_m0 + mi * 64 + warp * 16 + lane / 4 + upper * 8;\n"
            "            const int col = n0 + ni * 8 + (lane % 4) * 2;\n"
            "            const float v[2] = {acc[mi][ni * 4 + upper * 2], acc[mi][ni * 4 + upper * 2 + 1]};\n")
    stores = "".join(line[16:] + "\n" for line in pair_store(gp, batch).splitlines())   # pair_store indents 16
    lines = body + "".join("            " + line + "\n" for line in stores.splitlines()) + "        }\n"
    return "".join(indent + line + "\n" if line else "\n" for line in lines.splitlines())


def _device_code(gp: GemmProblem, p: Point, kernel: str) -> str:
    a_major, b_major = major("A", gp.a), major("B", gp.b)
    consts = (f"constexpr int BM = {p['block_m']}, BN = {p['block_n']}, BK = {BK};  // block tile\n"
              f"constexpr int WARPGROUPS = {p['warpgroups']}, THREADS = 128 * WARPGROUPS;\n"
              f"constexpr int WG_M = BM / WARPGROUPS, MI = WG_M / 64;  // rows per warpgroup, m64 steps\n"
              f"constexpr int STAGES = {p['stages']};\n"
              f"constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2, STAGE_BYTES = A_BYTES + B_BYTES;\n"
              f"constexpr int A_CHUNKS = BM * BK / 8 / THREADS, B_CHUNKS = BK * BN / 8 / THREADS;  // 16-byte copies per thread\n"
              f"{operand_constants(a_major, b_major)}")
    helpers = (f"\n{PTX_BEGIN}{_CP_ASYNC_RING_HELPERS}{WGMMA_PTX_HELPERS}"
               f"{wgmma_helper(gp.in_dtype.name, p['block_n'])}{PTX_END}\n"
               f"{DESCRIPTOR_FUNCTION}\n"
               f"// 128-byte swizzle: byte offset of 16-byte chunk `chunk` of row `row` in a tile of `rows` rows.\n"
               f"__device__ __forceinline__ uint32_t swizzled(int row, int chunk, int rows) {{\n"
               f"    return {SWIZZLED_OFFSET};\n"
               f"}}\n")
    epilogue = render_epilogue(gp)
    return f"""{consts}{helpers}
{epilogue}
__global__ void __launch_bounds__(THREADS, 1) {kernel}({kernel_params(gp)}) {{
    extern __shared__ __align__(1024) uint8_t smem_raw[];   // STAGES x (A tile, B tile)
    const uint32_t smem_base = (smem_addr(smem_raw) + 1023) & ~1023u;   // swizzle atoms start on 1024 B
    const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;   // warp within its warpgroup
    const int wg_m0 = (threadIdx.x / 128) * WG_M;   // this warpgroup's first row in the block tile
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    {batch_pointer("const uint16_t", "A_b", f"reinterpret_cast<const uint16_t*>({gp.a.param})", gp.a.batched, "M * K")}
    {batch_pointer("const uint16_t", "B_b", f"reinterpret_cast<const uint16_t*>({gp.b.param})", gp.b.batched, "K * N")}
    {batch_pointer(gp.out_dtype.c_type, "C_b", gp.out_param, gp.batch != 1, "M * N")}

    float acc[MI][BN / 2];
    #pragma unroll
    for (int mi = 0; mi < MI; ++mi)
        #pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[mi][i] = 0.0f;

    auto copy_tiles = [&](int stage, int k0) {{   // cp.async global -> swizzled shared, zero-filled at the edges
        const uint32_t a_tile = smem_base + stage * STAGE_BYTES, b_tile = a_tile + A_BYTES;
{_copy_async("A", gp.a)}{_copy_async("B", gp.b)}    }};
{multiply_stage(a_major, b_major)}

    const int k_tiles = (K + BK - 1) / BK;
    // Prologue: slices 0..STAGES-3 in flight, one commit group each (empty past the end).
    #pragma unroll
    for (int s = 0; s < STAGES - 2; ++s) {{
        if (s < k_tiles) copy_tiles(s, s * BK);
        cp_async_commit();
    }}
    for (int kt = 0; kt < k_tiles; ++kt) {{
        cp_async_wait<STAGES - 3>();   // this thread's copies of slice kt have landed
        fence_proxy_async();           // ... and are visible to the tensor cores
        __syncthreads();               // everyone's have, and every warpgroup finished reading slice kt-2
        const int next = kt + STAGES - 2;
        if (next < k_tiles) copy_tiles(next % STAGES, next * BK);   // refills slice kt-2's stage
        cp_async_commit();
        multiply(kt % STAGES);
        wgmma_wait<1>();               // slice kt-1's multiplications are done; kt's may still run
    }}
    wgmma_wait<0>();
    #pragma unroll
    for (int mi = 0; mi < MI; ++mi) fence_registers(acc[mi]);

    // Epilogue straight from the accumulator fragments ({gp.in_dtype.c_type} operands, fp32 accumulators).
{fragment_pair_stores(gp, "blockIdx.z", "    ")}}}
"""


SKETCHES: list[Sketch] = [WgmmaGemm()]

SAMPLE_INTENTS: list[str] = [
    "C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]; accumulate=f32",
    "C = A @ B; A: bf16[4096, 4096]; B: bf16[4096, 4096]",
    "C = A @ W.T; A: f16[2048, 1024]; W: f16[4096, 1024]",
    "C = A @ B; A: bf16[16, 512, 256]; B: bf16[16, 256, 512]",
    "C = A @ B; A: f16[4, 300, 256]; B: f16[256, 200]",
    "C = A.T @ B; A: bf16[1024, 2048]; B: bf16[1024, 512]",
    "C = A.T @ B.T; A: f16[1000, 1000]; B: f16[1000, 1000]",
    "C = A @ B; A: f16[M, 512]; B: f16[512, 1024]; M=777",
    "y = gelu(x @ W + b); x: bf16[8192, 1024]; W: bf16[1024, 4096]; b: bf16[4096]",
    "y = relu(A @ B) * 0.5 + R; A: f16[1000, 1024]; B: f16[1024, 1000]; R: f16[1000, 1000]",
    "C = A @ B; A: f16[1000, 999]; B: f16[999, 1000]",   # refused: 999-element rows are not 16-byte aligned
]
