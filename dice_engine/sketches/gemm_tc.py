"""GEMM on tensor cores (f16/bf16 operands, fp32 accumulation) with `mma.sync` and `ldmatrix`.

Each block computes a BM×BN tile of C with a grid of warps, each warp a WM×WN tile made of
16×8 `mma.sync.m16n8k16` fragments (sm_75: two `m16n8k8` per k16 step, f16 only). Operand
tiles are kept in shared memory in their global layout, rows padded by 8 elements (16 bytes)
so the eight 16-byte rows an `ldmatrix` reads fall on distinct banks; `ldmatrix.trans`
delivers the fragments of an m-contiguous A or an n-contiguous B. Slices of K arrive by
`cp.async` (16 B, zero-filling past the edges) through a STAGES-deep ring on sm_80+, or through
registers into two buffers (16-byte vector loads, or predicated scalar loads when a leading
dimension is not a multiple of 8). The epilogue runs on the fp32 accumulator fragments.
"""
# ruff: noqa: E501  (CUDA text is kept one generated line per source line, so it reads as it renders)
from __future__ import annotations

from dataclasses import dataclass

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, frame, launcher_params, \
    launcher_signature
from .gemm_common import CP_ASYNC_HELPERS, PTX_BEGIN, PTX_END, SMEM_ADDR_HELPER, GemmProblem, Operand, \
    batch_pointer, gemm_problem, kernel_params, operand_geometry, pair_store, read_problem, render_epilogue, \
    tiled_grid, tiled_launcher

_PAD = 8        # elements of padding per shared-memory row (16 bytes)
_CHUNK = 8      # 16-bit elements per 16-byte copy


def _tile_shape(which: str, op: Operand, p: Point) -> tuple[int, int]:
    """(rows, pitch) of an operand's shared-memory tile, stored in its global layout."""
    bm, bn, bk = p["block_m"], p["block_n"], p["block_k"]
    rows, cols = {("A", "row"): (bm, bk), ("A", "col"): (bk, bm),
                  ("B", "row"): (bk, bn), ("B", "col"): (bn, bk)}[(which, op.layout)]
    return rows, cols + _PAD


def _smem_bytes(gp: GemmProblem, p: Point) -> int:
    a_rows, a_pitch = _tile_shape("A", gp.a, p)
    b_rows, b_pitch = _tile_shape("B", gp.b, p)
    return p["stages"] * (a_rows * a_pitch + b_rows * b_pitch) * 2


def _threads(p: Point) -> int:
    return (p["block_m"] // p["warp_m"]) * (p["block_n"] // p["warp_n"]) * 32


class TensorCoreGemm(Sketch):
    name = "gemm.mma_sync"
    pattern = "gemm"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        gp = read_problem(problem)
        if isinstance(gp, str):
            return gp
        if gp.in_dtype.name not in ("f16", "bf16"):
            return f"tensor-core GEMM serves f16/bf16 operands, not {gp.in_dtype}"
        if not arch.has_tensor_cores:
            return f"{arch.name} has no tensor cores"
        if gp.in_dtype.name == "bf16" and not arch.has_bf16:
            return f"bf16 mma needs sm_80 or newer ({arch.name} has only f16 m16n8k8)"
        return None

    # -- design space ---------------------------------------------------------------------------

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        gp = gemm_problem(problem)
        loads = ("cp_async", "vector", "scalar") if arch.has_cp_async else ("vector", "scalar")
        tokens = [
            Token("block_m", (64, 128, 256), "rows of C per block (BM)", (Role.TILE,)),
            Token("block_n", (64, 128, 256), "columns of C per block (BN)", (Role.TILE,)),
            Token("block_k", (32, 64), "K slice per pipeline stage (BK)", (Role.TILE,)),
            Token("warp_m", (32, 64), "rows of C per warp (WM, in 16-row mma fragments)", (Role.TILE,)),
            Token("warp_n", (32, 64), "columns of C per warp (WN, in 8-column mma fragments)", (Role.TILE,)),
            Token("stages", (2, 3, 4), "shared-memory pipeline depth", (Role.PIPELINE,)),
            Token("load", loads, "global→shared path: cp.async ring, 16-byte register staging, "
                                 "or predicated scalar loads", ()),
        ]

        def warps(p: Point) -> str | None:
            if p["block_m"] % p["warp_m"] or p["block_n"] % p["warp_n"]:
                return "the warp tile does not divide the block tile"
            t = _threads(p)
            return None if 64 <= t <= min(512, arch.max_threads_per_block) else f"{t} threads per block"

        def copies(p: Point) -> str | None:
            for which, op in (("A", gp.a), ("B", gp.b)):
                rows, pitch = _tile_shape(which, op, p)
                chunks = rows * (pitch - _PAD) // _CHUNK
                if chunks % _threads(p):
                    return f"the {which} tile's {chunks} 16-byte chunks do not split over {_threads(p)} threads"
            return None

        def staging(p: Point) -> str | None:
            if p["load"] != "cp_async" and p["stages"] != 2:
                return "register-staged loads use exactly 2 shared-memory buffers"
            return None

        def alignment(p: Point) -> str | None:
            if p["load"] == "scalar":
                return None
            for which, op in (("A", gp.a), ("B", gp.b)):
                ld = op.leading_dim(which, gp)
                if not gp.is_multiple(ld, _CHUNK):
                    return f"16-byte loads need {which}'s leading dimension ({ld}) to be a literal multiple of 8"
            return None

        def registers(p: Point) -> str | None:
            mt, nt = p["warp_m"] // 16, p["warp_n"] // 8
            estimate = mt * nt * 4 + mt * 4 + nt * 2 + 40
            if p["load"] != "cp_async":   # the next slice waits in registers (plus addressing for scalars)
                estimate += (p["block_m"] + p["block_n"]) * p["block_k"] // (2 * _threads(p))
                estimate += 16 if p["load"] == "scalar" else 0
            limit = min(224, arch.max_regs_per_block // _threads(p) - 8)   # ptxas needs some slack
            return None if estimate <= limit else f"about {estimate} registers per thread (limit {limit})"

        def shared_memory(p: Point) -> str | None:
            smem = _smem_bytes(gp, p)
            limit = arch.smem_per_block_optin
            return None if smem <= limit else f"{smem} B of shared memory (opt-in limit {limit})"

        return DesignSpace(tokens, [warps, copies, staging, alignment, registers, shared_memory])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        gp = gemm_problem(problem)
        space = self.space(problem, arch)
        tiles = gp.hint(gp.M) * gp.hint(gp.N) * gp.hint(gp.batch)
        if tiles >= 128 * 256 * 2 * arch.sms:
            # CUTLASS's sm_80 f16 default: 128x256x64 with 64x64 warps, 3 stages
            shapes = [(128, 256, 64, 64, 64), (128, 256, 32, 64, 64), (128, 128, 32, 64, 64), (64, 64, 32, 32, 32)]
        elif tiles >= 128 * 128 * arch.sms:
            shapes = [(128, 128, 32, 64, 64), (64, 64, 32, 32, 32)]
        else:
            shapes = [(64, 64, 32, 32, 32), (64, 128, 32, 32, 64)]
        return space.first_legal(
            {"block_m": bm, "block_n": bn, "block_k": bk, "warp_m": wm, "warp_n": wn, "stages": stages,
             "load": load}
            for bm, bn, bk, wm, wn in shapes
            for load, stages in (("cp_async", 3), ("cp_async", 2), ("vector", 2), ("scalar", 2)))

    # -- rendering ------------------------------------------------------------------------------

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        gp = gemm_problem(problem)
        kernel = f"{name}_kernel"
        threads = _threads(point)
        smem = _smem_bytes(gp, point)
        device = _device_code(gp, point, arch, kernel)
        params = launcher_params(problem)
        qualified = f"dice_{name}::{kernel}"
        launcher = tiled_launcher(gp, launcher_signature(name, params), qualified, point, threads, smem)
        mma = "mma.sync m16n8k16" if arch.sm_number >= 80 else "mma.sync m16n8k8 (x2 per k16)"
        strategy = (f"{gp.in_dtype} GEMM on tensor cores ({mma}, fp32 accumulate), "
                    f"{point['block_m']}x{point['block_n']}x{point['block_k']} block tiles, "
                    f"{point['warp_m']}x{point['warp_n']} per warp, {point['stages']}-stage "
                    f"{_LOAD_WORDS[point['load']]}, ldmatrix from padded shared memory, "
                    f"A {gp.a.layout}-major, B {gp.b.layout}-major{', fused epilogue' if gp.has_epilogue else ''}")
        source = frame(name=name, strategy=strategy, tokens=point, device_code=device, launcher_code=launcher)
        grid = tiled_grid(gp, point)
        return RenderedKernel(
            sketch=self.name, tokens=dict(point), source=source, kernel_names=[qualified],
            launcher=launcher, params=params, launches=[Launch(kernel, grid, (threads, 1, 1), smem)],
            async_slices=point["stages"] - 1 if point["load"] == "cp_async" else 0,
            summary=f"mma {point['block_m']}x{point['block_n']}x{point['block_k']} "
                    f"w{point['warp_m']}x{point['warp_n']} {point['stages']}st {point['load']}")


_LOAD_WORDS = {"cp_async": "cp.async pipeline", "vector": "register-staged 16-byte loads",
               "scalar": "register-staged predicated scalar loads"}


# ---------------------------------------------------------------------------------------------
# CUDA text

_PTX_HELPERS = SMEM_ADDR_HELPER + r"""
// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i, whose fragment
// lands in r[i] (lane l holds row l/4, columns 2(l%4) and 2(l%4)+1; .trans: the transpose).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
"""

def _mma_helper(dtype: str, sm: int) -> str:
    ab = "bf16" if dtype == "bf16" else "f16"
    if sm >= 80:
        return f"""
// D += A(16x16, row) * B(16x8, col): a = 4 regs (rows g/g+8, k 0-7/8-15), b = 2 regs (k 0-7/8-15).
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.{ab}.{ab}.f32 "
                 "{{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};\\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}}
"""
    return """
// sm_75 has no m16n8k16: one k16 step is two m16n8k8 (a[0..1] and b[0] for k 0-7, a[2..3] and b[1] for 8-15).
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(b[0]));
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[2]), "r"(a[3]), "r"(b[1]));
}
"""


def _chunk_coords(which: str, g: dict[str, str]) -> str:
    """Statements locating this thread's i-th 16-byte chunk of the tile (tile and global coords)."""
    o, n = g["outer"], g["inner"]
    return (f"            const int idx = threadIdx.x + i * THREADS;\n"
            f"            const int {o} = idx / ({g['inner_extent']} / 8), {n} = (idx % ({g['inner_extent']} / 8)) * 8;\n"
            f"            const int g{o} = {g['outer_origin']} + {o}, g{n} = {g['inner_origin']} + {n};\n")


def _copy_async(which: str, op: Operand) -> str:
    g = operand_geometry(which, op)
    o, n = g["outer"], g["inner"]
    return (f"        #pragma unroll\n"
            f"        for (int i = 0; i < {which}_CHUNKS; ++i) {{\n"
            f"{_chunk_coords(which, g)}"
            f"            const bool valid = g{o} < {g['outer_limit']} && g{n} < {g['inner_limit']};\n"
            f"            const uint16_t* src = valid ? {which}_b + (long long)g{o} * {g['ld']} + g{n} : {which}_b;\n"
            f"            cp_async_16(smem_addr({which}s + {o} * {which}_PITCH + {n}), src, valid);\n"
            f"        }}\n")


def _load_registers(which: str, op: Operand, scalar: bool) -> str:
    g = operand_geometry(which, op)
    o, n = g["outer"], g["inner"]
    stage = f"{which.lower()}_stage[i]"
    if not scalar:
        fetch = (f"            {stage} = make_uint4(0, 0, 0, 0);\n"
                 f"            if (g{o} < {g['outer_limit']} && g{n} < {g['inner_limit']})\n"
                 f"                {stage} = *reinterpret_cast<const uint4*>({which}_b + (long long)g{o} * {g['ld']} + g{n});\n")
    else:   # element by element: any alignment, exact edges
        fetch = (f"            uint32_t w[4] = {{0, 0, 0, 0}};\n"
                 f"            if (g{o} < {g['outer_limit']}) {{\n"
                 f"                const uint16_t* src = {which}_b + (long long)g{o} * {g['ld']} + g{n};\n"
                 f"                #pragma unroll\n"
                 f"                for (int e = 0; e < 8; ++e)\n"
                 f"                    if (g{n} + e < {g['inner_limit']}) w[e / 2] |= uint32_t(src[e]) << (16 * (e % 2));\n"
                 f"            }}\n"
                 f"            {stage} = make_uint4(w[0], w[1], w[2], w[3]);\n")
    return (f"        #pragma unroll\n"
            f"        for (int i = 0; i < {which}_CHUNKS; ++i) {{\n"
            f"{_chunk_coords(which, g)}{fetch}"
            f"        }}\n")


def _store_registers(which: str, op: Operand) -> str:
    g = operand_geometry(which, op)
    o, n = g["outer"], g["inner"]
    return (f"        #pragma unroll\n"
            f"        for (int i = 0; i < {which}_CHUNKS; ++i) {{\n"
            f"            const int idx = threadIdx.x + i * THREADS;\n"
            f"            const int {o} = idx / ({g['inner_extent']} / 8), {n} = (idx % ({g['inner_extent']} / 8)) * 8;\n"
            f"            *reinterpret_cast<uint4*>({which}s + {o} * {which}_PITCH + {n}) = {which.lower()}_stage[i];\n"
            f"        }}\n")


@dataclass(frozen=True)
class LdmatrixRows:
    """Which shared-memory row each lane hands to one `ldmatrix.x4`: the tile's row index
    (`outer`) and the first element of the 8 it reads (`inner`), as C expressions of lane,
    kk (k16 step), mi/ni (fragment) and warp_m0/warp_n0; `trans` selects `.trans`."""
    outer: str
    inner: str
    trans: bool


# Fragments wanted (PTX ISA, mma.m16n8k16): A regs 0..3 = (m 0-7, k 0-7), (m 8-15, k 0-7),
# (m 0-7, k 8-15), (m 8-15, k 8-15); B fragments ni, ni+1 take regs (0, 1) and (2, 3) =
# (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15). Lanes 8i..8i+7 address
# matrix i; a tile whose rows are k (m- or n-contiguous) is read with .trans.
LDMATRIX_ROWS: dict[tuple[str, str], LdmatrixRows] = {
    ("A", "row"): LdmatrixRows("warp_m0 + mi * 16 + lane % 16", "kk * 16 + (lane / 16) * 8", False),
    ("A", "col"): LdmatrixRows("kk * 16 + lane % 8 + (lane / 16) * 8", "warp_m0 + mi * 16 + (lane / 8) % 2 * 8", True),
    ("B", "row"): LdmatrixRows("kk * 16 + lane % 8 + (lane / 8) % 2 * 8", "warp_n0 + ni * 8 + (lane / 16) * 8", True),
    ("B", "col"): LdmatrixRows("warp_n0 + ni * 8 + lane % 8 + (lane / 16) * 8", "kk * 16 + (lane / 8) % 2 * 8", False),
}


def _ldmatrix(which: str, op: Operand, dest: str) -> str:
    rows = LDMATRIX_ROWS[(which, op.layout)]
    fn = "ldmatrix_x4_trans" if rows.trans else "ldmatrix_x4"
    return (f"                const int row = {rows.outer}, col = {rows.inner};   // {which} tile row and column\n"
            f"                {fn}({dest}, smem_addr({which}s + row * {which}_PITCH + col));\n")


def _fragment_loads(gp: GemmProblem) -> str:
    """This warp's A and B fragments for k16 step kk (see LDMATRIX_ROWS)."""
    return ("            #pragma unroll\n"
            "            for (int mi = 0; mi < MT; ++mi) {\n"
            f"{_ldmatrix('A', gp.a, 'a_frag[mi]')}"
            "            }\n"
            "            #pragma unroll\n"
            "            for (int ni = 0; ni < NT; ni += 2) {   // two 8-column B fragments per ldmatrix\n"
            "                uint32_t r[4];\n"
            f"{_ldmatrix('B', gp.b, 'r')}"
            "                b_frag[ni][0] = r[0]; b_frag[ni][1] = r[1]; b_frag[ni + 1][0] = r[2]; b_frag[ni + 1][1] = r[3];\n"
            "            }\n")


def _device_code(gp: GemmProblem, p: Point, arch: ArchSpec, kernel: str) -> str:
    a_rows, a_pitch = _tile_shape("A", gp.a, p)
    b_rows, b_pitch = _tile_shape("B", gp.b, p)
    cp_async = p["load"] == "cp_async"
    consts = (f"constexpr int BM = {p['block_m']}, BN = {p['block_n']}, BK = {p['block_k']};  // block tile\n"
              f"constexpr int WM = {p['warp_m']}, WN = {p['warp_n']};  // warp tile\n"
              f"constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;\n"
              f"constexpr int MT = WM / 16, NT = WN / 8;  // mma fragments per warp\n"
              f"constexpr int STAGES = {p['stages']};\n"
              f"// shared-memory tiles in global layout, rows padded by 8 elements for conflict-free ldmatrix\n"
              f"constexpr int A_PITCH = {a_pitch}, A_TILE = {a_rows} * A_PITCH;  // A {gp.a.layout}-major\n"
              f"constexpr int B_PITCH = {b_pitch}, B_TILE = {b_rows} * B_PITCH;  // B {gp.b.layout}-major\n"
              f"constexpr int A_CHUNKS = BM * BK / 8 / THREADS, B_CHUNKS = BK * BN / 8 / THREADS;  // 16-byte copies per thread\n")
    helpers = (f"\n{PTX_BEGIN}{_PTX_HELPERS}{CP_ASYNC_HELPERS if cp_async else ''}"
               f"{_mma_helper(gp.in_dtype.name, arch.sm_number)}{PTX_END}\n")
    multiply = ("    auto multiply = [&](int stage) {   // acc += this warp's part of A-tile x B-tile\n"
                "        const uint16_t* As = smem + stage * (A_TILE + B_TILE);\n"
                "        const uint16_t* Bs = As + A_TILE;\n"
                "        #pragma unroll\n"
                "        for (int kk = 0; kk < BK / 16; ++kk) {\n"
                "            uint32_t a_frag[MT][4], b_frag[NT][2];\n"
                f"{_fragment_loads(gp)}"
                "            #pragma unroll\n"
                "            for (int mi = 0; mi < MT; ++mi)\n"
                "                #pragma unroll\n"
                "                for (int ni = 0; ni < NT; ++ni) mma_16x8x16(acc[mi][ni], a_frag[mi], b_frag[ni]);\n"
                "        }\n"
                "    };\n")
    if cp_async:
        movers = ("    auto copy_tiles = [&](int stage, int k0) {   // cp.async global -> shared, zero-filled at the edges\n"
                  "        uint16_t* As = smem + stage * (A_TILE + B_TILE);\n"
                  "        uint16_t* Bs = As + A_TILE;\n"
                  f"{_copy_async('A', gp.a)}{_copy_async('B', gp.b)}"
                  "    };\n")
        main_loop = ("    // Prologue: slices 0..STAGES-2 in flight, one commit group each (empty past the end).\n"
                     "    #pragma unroll\n"
                     "    for (int s = 0; s < STAGES - 1; ++s) {\n"
                     "        if (s < k_tiles) copy_tiles(s, s * BK);\n"
                     "        cp_async_commit();\n"
                     "    }\n"
                     "    for (int kt = 0; kt < k_tiles; ++kt) {\n"
                     "        cp_async_wait<STAGES - 2>();   // this thread's copies of slice kt have landed\n"
                     "        __syncthreads();               // ... everyone's have, and slice kt-1 is no longer read\n"
                     "        const int next = kt + STAGES - 1;\n"
                     "        if (next < k_tiles) copy_tiles(next % STAGES, next * BK);   // refills slice kt-1's stage\n"
                     "        cp_async_commit();\n"
                     "        multiply(kt % STAGES);\n"
                     "    }\n")
    else:
        scalar = p["load"] == "scalar"
        movers = ("    uint4 a_stage[A_CHUNKS], b_stage[B_CHUNKS];   // the next slice, on its way to shared memory\n"
                  "    auto load_tiles = [&](int k0) {   // global -> registers, zero-filled outside the matrices\n"
                  f"{_load_registers('A', gp.a, scalar)}{_load_registers('B', gp.b, scalar)}"
                  "    };\n"
                  "    auto store_tiles = [&](int stage) {   // registers -> shared memory\n"
                  "        uint16_t* As = smem + stage * (A_TILE + B_TILE);\n"
                  "        uint16_t* Bs = As + A_TILE;\n"
                  f"{_store_registers('A', gp.a)}{_store_registers('B', gp.b)}"
                  "    };\n")
        main_loop = ("    load_tiles(0);\n"
                     "    store_tiles(0);\n"
                     "    __syncthreads();\n"
                     "    for (int kt = 0; kt < k_tiles; ++kt) {\n"
                     "        const bool more = kt + 1 < k_tiles;\n"
                     "        if (more) load_tiles((kt + 1) * BK);   // in flight during the math below\n"
                     "        multiply(kt & 1);\n"
                     "        if (more) store_tiles((kt + 1) & 1);   // that buffer was last read before the previous barrier\n"
                     "        __syncthreads();\n"
                     "    }\n")
    epilogue = render_epilogue(gp)
    elem = gp.in_dtype.c_type
    return f"""{consts}{helpers}
{epilogue}
// min 1 block/SM: registers go to the tiles (ptxas would otherwise trade them for occupancy and spill)
__global__ void __launch_bounds__(THREADS, 1) {kernel}({kernel_params(gp)}) {{
    extern __shared__ __align__(16) uint16_t smem[];   // STAGES x (A tile, B tile), raw 16-bit elements
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int warp_m0 = (warp / WARPS_N) * WM, warp_n0 = (warp % WARPS_N) * WN;   // warp tile in the block tile
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    {batch_pointer("const uint16_t", "A_b", f"reinterpret_cast<const uint16_t*>({gp.a.param})", gp.a.batched, "M * K")}
    {batch_pointer("const uint16_t", "B_b", f"reinterpret_cast<const uint16_t*>({gp.b.param})", gp.b.batched, "K * N")}
    {batch_pointer(gp.out_dtype.c_type, "C_b", gp.out_param, gp.batch != 1, "M * N")}

    float acc[MT][NT][4];   // fragment (mi, ni): rows g and g+8, columns 2(lane%4) and +1, g = lane/4
    #pragma unroll
    for (int mi = 0; mi < MT; ++mi)
        #pragma unroll
        for (int ni = 0; ni < NT; ++ni)
            #pragma unroll
            for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.0f;

{movers}{multiply}
    const int k_tiles = (K + BK - 1) / BK;
{main_loop}
    // Epilogue straight from the fragments ({elem} operands, fp32 accumulators).
    #pragma unroll
    for (int mi = 0; mi < MT; ++mi)
        #pragma unroll
        for (int ni = 0; ni < NT; ++ni)
            #pragma unroll
            for (int upper = 0; upper < 2; ++upper) {{   // rows g, then g + 8
                const int row = m0 + warp_m0 + mi * 16 + lane / 4 + upper * 8;
                const int col = n0 + warp_n0 + ni * 8 + (lane % 4) * 2;
                const float v[2] = {{acc[mi][ni][2 * upper], acc[mi][ni][2 * upper + 1]}};
{pair_store(gp)}            }}
}}
"""


SKETCHES: list[Sketch] = [TensorCoreGemm()]

SAMPLE_INTENTS: list[str] = [
    "C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]; accumulate=f32",
    "C = A @ B; A: bf16[4096, 4096]; B: bf16[4096, 4096]",
    "C = A @ B; A: f16[1000, 999]; B: f16[999, 1000]",
    "C = A @ B; A: f16[M, 512]; B: f16[512, 1024]; M=777",
    "C = A @ B; A: bf16[16, 512, 256]; B: bf16[16, 256, 512]",
    "C = A @ B; A: f16[4, 300, 256]; B: f16[256, 200]",
    "C = A @ W.T; A: f16[2048, 1024]; W: f16[4096, 1024]",
    "C = A.T @ B.T; A: f16[999, 1000]; B: f16[1001, 999]",
    "C = A.T @ B; A: bf16[1024, 2048]; B: bf16[1024, 512]",
    "y = gelu(x @ W + b); x: bf16[8192, 1024]; W: bf16[1024, 4096]; b: bf16[4096]",
    "y = relu(A @ B) * 0.5 + R; A: f16[1000, 1024]; B: f16[1024, 1000]; R: f16[1000, 1000]",
]
