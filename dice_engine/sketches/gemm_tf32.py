"""fp32 GEMM on tensor cores in TF32 (`mma.sync.m16n8k8.tf32`), only where the intent opts in
with `precision=tf32`: the operands are rounded to TF32 (10-bit mantissa, cvt.rna) and the
products accumulate in fp32, so the result differs from an fp32 GEMM by about 1e-3 relative;
an fp32 intent without the option never gets this kernel.

Each block computes a BM×BN tile of C with a grid of warps, each warp a WM×WN tile of 16×8
fragments. Slices of K arrive in a STAGES-deep cp.async ring (16-byte copies, zero-filled past
the edges), A as As[m][k] with rows padded by 4 floats and B as Bs[k][n] padded by 8, so the
scalar fragment reads of a warp (lane 4g + t reads row g, column t) fall on 32 distinct banks. The
fragments are read as scalars and rounded to TF32 as they are read; the epilogue runs on the
fp32 accumulators. Operands are stored matrices (A: [.., M, K], B: [.., K, N]) whose contiguous
extents K and N are literal multiples of 4 (16-byte chunks).
"""
# ruff: noqa: E501  (CUDA text is kept one generated line per source line, so it reads as it renders)
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, frame, launcher_params, \
    launcher_signature
from .gemm_common import CP_ASYNC_HELPERS, PTX_BEGIN, PTX_END, SMEM_ADDR_HELPER, GemmProblem, batch_pointer, \
    gemm_problem, kernel_params, pair_store, read_problem, render_epilogue, tiled_grid, tiled_launcher

TF32 = "tf32"
_A_PAD, _B_PAD = 4, 8   # floats of padding per shared-memory row (conflict-free fragment reads)


def wants_tf32(problem: Problem) -> bool:
    return problem.program.options.get("precision") == TF32


def _threads(p: Point) -> int:
    return (p["block_m"] // p["warp_m"]) * (p["block_n"] // p["warp_n"]) * 32


def _smem_bytes(p: Point) -> int:
    return p["stages"] * (p["block_m"] * (p["block_k"] + _A_PAD) + p["block_k"] * (p["block_n"] + _B_PAD)) * 4


class Tf32Gemm(Sketch):
    name = "gemm.tf32_mma"
    pattern = "gemm"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        if not wants_tf32(problem):
            return "TF32 tensor cores serve only intents that opt in with precision=tf32"
        gp = read_problem(problem)
        if isinstance(gp, str):
            return gp
        if gp.in_dtype.name != "f32":
            return f"precision=tf32 applies to f32 operands, not {gp.in_dtype}"
        if arch.sm_number < 80:
            return f"TF32 mma needs sm_80 or newer, not {arch.name}"
        if gp.a.layout != "row" or gp.b.layout != "row":
            return "the TF32 GEMM reads stored A [M, K] and B [K, N] (no transposed operands)"
        if not (gp.is_multiple(gp.K, 4) and gp.is_multiple(gp.N, 4)):
            return "the TF32 GEMM copies 16-byte chunks: K and N must be literal multiples of 4"
        return None

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        tokens = [
            Token("block_m", (64, 128), "rows of C per block (BM)", (Role.TILE,)),
            Token("block_n", (64, 128), "columns of C per block (BN)", (Role.TILE,)),
            Token("block_k", (16, 32), "K slice per pipeline stage (BK)", (Role.TILE,)),
            Token("warp_m", (32, 64), "rows of C per warp (WM, in 16-row mma fragments)", (Role.TILE,)),
            Token("warp_n", (32, 64), "columns of C per warp (WN, in 8-column mma fragments)", (Role.TILE,)),
            Token("stages", (2, 3, 4), "cp.async pipeline depth", (Role.PIPELINE,)),
        ]

        def warps(p: Point) -> str | None:
            if p["block_m"] % p["warp_m"] or p["block_n"] % p["warp_n"]:
                return "the warp tile does not divide the block tile"
            t = _threads(p)
            return None if 64 <= t <= 256 else f"{t} threads per block (64..256 wanted)"

        def registers(p: Point) -> str | None:
            mt, nt = p["warp_m"] // 16, p["warp_n"] // 8
            estimate = mt * nt * 4 + mt * 4 + nt * 2 + 40
            limit = min(224, arch.max_regs_per_block // _threads(p) - 8)
            return None if estimate <= limit else f"about {estimate} registers per thread (limit {limit})"

        def shared_memory(p: Point) -> str | None:
            smem = _smem_bytes(p)
            return None if smem <= arch.smem_per_block_optin else \
                f"{smem} B of shared memory (opt-in limit {arch.smem_per_block_optin})"

        return DesignSpace(tokens, [warps, registers, shared_memory])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        gp = gemm_problem(problem)
        space = self.space(problem, arch)
        big = gp.hint(gp.M) * gp.hint(gp.N) * gp.hint(gp.batch) >= 128 * 128 * 2 * arch.sms
        shapes = [(128, 128, 32, 64, 32), (64, 64, 32, 32, 32)] if big else [(64, 64, 32, 32, 32)]
        return space.first_legal(
            {"block_m": bm, "block_n": bn, "block_k": bk, "warp_m": wm, "warp_n": wn, "stages": stages}
            for bm, bn, bk, wm, wn in shapes for stages in (3, 2))

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        gp = gemm_problem(problem)
        kernel = f"{name}_kernel"
        threads, smem = _threads(point), _smem_bytes(point)
        params = launcher_params(problem)
        qualified = f"dice_{name}::{kernel}"
        launcher = tiled_launcher(gp, launcher_signature(name, params), qualified, point, threads, smem)
        strategy = (f"f32 GEMM on tensor cores in TF32 (precision=tf32: operands rounded to TF32, fp32 "
                    f"accumulate; mma.sync m16n8k8), {point['block_m']}x{point['block_n']}x{point['block_k']} "
                    f"block tiles, {point['warp_m']}x{point['warp_n']} per warp, {point['stages']}-stage cp.async "
                    f"pipeline{', fused epilogue' if gp.has_epilogue else ''}")
        source = frame(name=name, strategy=strategy, tokens=point, device_code=_device_code(gp, point, kernel),
                       launcher_code=launcher)
        return RenderedKernel(
            sketch=self.name, tokens=dict(point), source=source, kernel_names=[qualified], launcher=launcher,
            params=params, launches=[Launch(kernel, tiled_grid(gp, point), (threads, 1, 1), smem)],
            async_slices=point["stages"] - 1,
            summary=f"tf32 mma {point['block_m']}x{point['block_n']}x{point['block_k']} "
                    f"w{point['warp_m']}x{point['warp_n']} {point['stages']}st")


_PTX_HELPERS = SMEM_ADDR_HELPER + CP_ASYNC_HELPERS + r"""
// fp32 -> TF32, rounded to nearest (ties away), as the mma reads it.
__device__ __forceinline__ uint32_t to_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// D += A(16x8, row) * B(8x8, col) in TF32 (g = lane/4, t = lane%4): a = rows g/g+8 at k t and
// t+4 (a0: g,t  a1: g+8,t  a2: g,t+4  a3: g+8,t+4), b = k t and t+4 at column g, d = rows g/g+8,
// columns 2t, 2t+1.
__device__ __forceinline__ void mma_tf32_16x8x8(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
"""


def _device_code(gp: GemmProblem, p: Point, kernel: str) -> str:
    return f"""{PTX_BEGIN}{_PTX_HELPERS}{PTX_END}

constexpr int BM = {p['block_m']}, BN = {p['block_n']}, BK = {p['block_k']};  // block tile
constexpr int WM = {p['warp_m']}, WN = {p['warp_n']};  // warp tile
constexpr int STAGES = {p['stages']};  // cp.async ring depth
constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
constexpr int MT = WM / 16, NT = WN / 8;  // mma fragments per warp
constexpr int A_PITCH = BK + {_A_PAD}, B_PITCH = BN + {_B_PAD};  // padded rows: conflict-free fragment reads
constexpr int A_TILE = BM * A_PITCH, B_TILE = BK * B_PITCH;  // floats per stage
constexpr int A_CHUNKS = BM * BK / 4, B_CHUNKS = BK * BN / 4;  // 16-byte copies per stage
{render_epilogue(gp)}
__global__ void __launch_bounds__(THREADS) {kernel}({kernel_params(gp)}) {{
    extern __shared__ __align__(16) float smem[];
    float* As = smem;                    // [STAGES][BM][A_PITCH]: A slice, k contiguous
    float* Bs = smem + STAGES * A_TILE;  // [STAGES][BK][B_PITCH]: B slice, n contiguous
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int warp_m0 = (warp / WARPS_N) * WM, warp_n0 = (warp % WARPS_N) * WN;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    {batch_pointer("const float", "A_b", gp.a.param, gp.a.batched, "M * K")}
    {batch_pointer("const float", "B_b", gp.b.param, gp.b.batched, "K * N")}
    {batch_pointer(gp.out_dtype.c_type, "C_b", gp.out_param, gp.batch != 1, "M * N")}
    const int k_tiles = (K + BK - 1) / BK;

    auto copy_tiles = [&](int stage, int kt) {{   // zero-filled past M, N and K (K, N: multiples of 4)
        const int k0 = kt * BK;
        float* a_tile = As + stage * A_TILE;
        float* b_tile = Bs + stage * B_TILE;
        for (int c = threadIdx.x; c < A_CHUNKS; c += THREADS) {{
            const int m = c / (BK / 4), k = (c % (BK / 4)) * 4;
            const int gm = m0 + m, gk = k0 + k;
            const bool valid = gm < M && gk < K;
            cp_async_16(smem_addr(a_tile + m * A_PITCH + k), valid ? A_b + (long long)gm * K + gk : A_b, valid);
        }}
        for (int c = threadIdx.x; c < B_CHUNKS; c += THREADS) {{
            const int k = c / (BN / 4), n = (c % (BN / 4)) * 4;
            const int gk = k0 + k, gn = n0 + n;
            const bool valid = gk < K && gn < N;
            cp_async_16(smem_addr(b_tile + k * B_PITCH + n), valid ? B_b + (long long)gk * N + gn : B_b, valid);
        }}
    }};

    float acc[MT][NT][4];
    #pragma unroll
    for (int i = 0; i < MT; ++i)
        #pragma unroll
        for (int j = 0; j < NT; ++j)
            #pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

    #pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {{   // one commit group per stage, empty past the end
        if (s < k_tiles) copy_tiles(s, s);
        cp_async_commit();
    }}
    for (int kt = 0; kt < k_tiles; ++kt) {{
        cp_async_wait<STAGES - 2>();   // slice kt has landed
        __syncthreads();               // ... for every thread; and slice kt-1's stage is free
        if (kt + STAGES - 1 < k_tiles) copy_tiles((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
        cp_async_commit();
        const float* a_tile = As + (kt % STAGES) * A_TILE;
        const float* b_tile = Bs + (kt % STAGES) * B_TILE;
        #pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {{
            uint32_t a[MT][4], b[NT][2];
            #pragma unroll
            for (int i = 0; i < MT; ++i) {{
                const float* f = a_tile + (warp_m0 + i * 16 + g) * A_PITCH + kk + t;
                a[i][0] = to_tf32(f[0]);
                a[i][1] = to_tf32(f[8 * A_PITCH]);
                a[i][2] = to_tf32(f[4]);
                a[i][3] = to_tf32(f[8 * A_PITCH + 4]);
            }}
            #pragma unroll
            for (int j = 0; j < NT; ++j) {{
                const float* f = b_tile + (kk + t) * B_PITCH + warp_n0 + j * 8 + g;
                b[j][0] = to_tf32(f[0]);
                b[j][1] = to_tf32(f[4 * B_PITCH]);
            }}
            #pragma unroll
            for (int i = 0; i < MT; ++i)
                #pragma unroll
                for (int j = 0; j < NT; ++j) mma_tf32_16x8x8(acc[i][j], a[i], b[j]);
        }}
    }}
    cp_async_wait<0>();

    #pragma unroll
    for (int i = 0; i < MT; ++i)
        #pragma unroll
        for (int j = 0; j < NT; ++j)
            #pragma unroll
            for (int h = 0; h < 2; ++h) {{
                const int row = m0 + warp_m0 + i * 16 + g + 8 * h, col = n0 + warp_n0 + j * 8 + 2 * t;
                const float v[2] = {{acc[i][j][2 * h], acc[i][j][2 * h + 1]}};
{pair_store(gp)}            }}
}}
"""


SKETCHES: list[Sketch] = [Tf32Gemm()]

SAMPLE_INTENTS: list[str] = [
    "C = A @ B; A: f32[4096, 4096]; B: f32[4096, 4096]; precision=tf32",
    "y = relu(A @ B + b); A: f32[1000, 512]; B: f32[512, 1004]; b: f32[1004]; precision=tf32",
]
