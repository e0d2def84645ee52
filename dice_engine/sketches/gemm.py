"""GEMM on CUDA cores (fp32, fp64): shared-memory block tiles and register thread tiles.

Each block computes a BM×BN tile of C, marching over K in BK-deep slices staged in shared
memory: A transposed to As[k][m] (so a thread's column of A is a contiguous, conflict-free
vector read) and B as Bs[k][n]. Each thread owns a TM×TN register tile made of 4×4 sub-tiles
strided across the block tile (rows `c*4*THREADS_Y + ty*4 + i`), and a warp is a 4×8 patch of
the thread grid, so each 16-byte shared-memory read of a warp touches 64 B of As and 128 B of Bs
(one wavefront each, on distinct banks). With double buffering the next slice is read from
global memory into registers while the current one is multiplied, and written to the
other shared-memory buffer afterwards (one barrier per slice); single-buffered, each slice
goes straight to shared memory between two barriers. Edges and K tails are
zero-filled by predicated loads; vector (float4/double2) loads need a literal leading
dimension that is a multiple of the vector width.
"""
# ruff: noqa: E501  (CUDA text is kept one generated line per source line, so it reads as it renders)
from __future__ import annotations

from dataclasses import dataclass

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import DesignSpace, Launch, Point, RenderedKernel, Sketch, Token, frame, launcher_params, \
    launcher_signature
from .gemm_common import GemmProblem, Operand, batch_pointer, gemm_problem, kernel_params, \
    read_problem, render_epilogue, store, tiled_grid, tiled_launcher

_SUB = 4   # thread sub-tile edge: one 16-byte (float4) shared-memory read per sub-tile row
_PAD = 4   # shared-memory row padding (elements): keeps transposed stores conflict-free, rows 16-B aligned


class SimtGemm(Sketch):
    name = "gemm.simt_tiled"
    pattern = "gemm"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        gp = read_problem(problem)
        if isinstance(gp, str):
            return gp
        if gp.in_dtype.name not in ("f32", "f64"):
            return f"the CUDA-core GEMM serves f32/f64 operands, not {gp.in_dtype} (f16/bf16 run on tensor cores)"
        return None

    # -- design space ---------------------------------------------------------------------------

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        gp = gemm_problem(problem)
        size = gp.in_dtype.size
        widest = 16 // size   # float4 / double2
        tokens = [
            Token("block_m", (64, 128), "rows of C per block (BM)"),
            Token("block_n", (64, 128), "columns of C per block (BN)"),
            Token("block_k", (8, 16), "K slice staged in shared memory per step (BK)"),
            Token("thread_m", (4, 8), "rows of C per thread (TM, in 4-row sub-tiles)"),
            Token("thread_n", (4, 8), "columns of C per thread (TN, in 4-column sub-tiles)"),
            Token("vector", (1, widest), "elements per global load of A and B (16-byte vectors)"),
            Token("buffering", (1, 2), "shared-memory buffers: 2 overlaps the next slice's loads with math"),
        ]

        def threads(p: Point) -> int:
            return (p["block_m"] // p["thread_m"]) * (p["block_n"] // p["thread_n"])

        def thread_count(p: Point) -> str | None:
            t = threads(p)
            if t < 64 or t > min(arch.max_threads_per_block, 512):
                return f"{t} threads per block (64..512 wanted)"
            return None

        def tile_loads(p: Point) -> str | None:
            for which, extent in (("A", p["block_m"]), ("B", p["block_n"])):
                elems = extent * p["block_k"]
                if elems % (threads(p) * p["vector"]):
                    return f"the {which} tile ({elems} elements) does not split into {p['vector']}-wide loads " \
                           f"over {threads(p)} threads"
            return None

        def alignment(p: Point) -> str | None:
            if p["vector"] == 1:
                return None
            for which, op in (("A", gp.a), ("B", gp.b)):
                ld = op.leading_dim(which, gp)
                if not gp.is_multiple(ld, p["vector"]):
                    return f"vector loads need {which}'s leading dimension ({ld}) to be a literal " \
                           f"multiple of {p['vector']}"
            return None

        def loads_per_thread(p: Point) -> str | None:
            # each load is in flight with its own address and predicate; many of them crowd out the tile
            loads = (p["block_m"] + p["block_n"]) * p["block_k"] // (threads(p) * p["vector"])
            return None if loads <= 8 else f"{loads} global loads per thread per slice (at most 8)"

        def registers(p: Point) -> str | None:
            words = size // 4
            estimate = (p["thread_m"] * p["thread_n"] + p["thread_m"] + p["thread_n"]) * words + 40
            limit = min(200, arch.max_regs_per_block // threads(p) - 8)   # ptxas needs some slack
            return None if estimate <= limit else f"about {estimate} registers per thread (limit {limit})"

        def shared_memory(p: Point) -> str | None:
            smem = _smem_bytes(p, size)
            limit = arch.smem_per_block_default
            return None if smem <= limit else f"{smem} B of shared memory (static limit {limit})"

        return DesignSpace(tokens, [thread_count, tile_loads, loads_per_thread, alignment, registers, shared_memory])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        gp = gemm_problem(problem)
        space = self.space(problem, arch)
        small = gp.hint(gp.M) * gp.hint(gp.N) * gp.hint(gp.batch) < 128 * 128 * 2 * arch.sms
        big_tiles = [(128, 128, 8, 8, 8), (128, 128, 16, 8, 8)]
        small_tiles = [(64, 64, 16, 4, 4), (64, 64, 8, 4, 4)]
        return space.first_legal(
            {"block_m": bm, "block_n": bn, "block_k": bk, "thread_m": tm, "thread_n": tn, "vector": vector,
             "buffering": 2}
            for bm, bn, bk, tm, tn in (small_tiles if small else big_tiles + small_tiles)
            for vector in sorted(space.token("vector").choices, reverse=True))

    # -- rendering ------------------------------------------------------------------------------

    def render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        gp = gemm_problem(problem)
        self.space(problem, arch).require_legal(point, self.name)
        kernel = f"{name}_kernel"
        threads = (point["block_m"] // point["thread_m"]) * (point["block_n"] // point["thread_n"])
        device = _device_code(gp, point, kernel)
        params = launcher_params(problem)
        # static shared memory only: the launch passes no dynamic bytes
        launcher = tiled_launcher(gp, launcher_signature(name, params), f"dice_{name}::{kernel}", point, threads, 0)
        strategy = (f"{gp.in_dtype} GEMM on CUDA cores, {point['block_m']}x{point['block_n']}x{point['block_k']} "
                    f"block tiles, {point['thread_m']}x{point['thread_n']} per thread, "
                    f"{'double-buffered' if point['buffering'] == 2 else 'single-buffered'} shared memory, "
                    f"{point['vector']}-wide loads, A {gp.a.layout}-major, B {gp.b.layout}-major"
                    f"{', fused epilogue' if gp.has_epilogue else ''}")
        source = frame(name=name, strategy=strategy, tokens=point, device_code=device, launcher_code=launcher)
        grid = tiled_grid(gp, point)
        return RenderedKernel(
            sketch=self.name, tokens=dict(point), source=source, kernel_names=[f"dice_{name}::{kernel}"],
            launcher=launcher, params=params,
            launches=[Launch(kernel, grid, (threads, 1, 1), _smem_bytes(point, gp.in_dtype.size))],
            summary=f"simt {point['block_m']}x{point['block_n']}x{point['block_k']} "
                    f"t{point['thread_m']}x{point['thread_n']} v{point['vector']} buf{point['buffering']}")


def _smem_bytes(p: Point, size: int) -> int:
    return p["buffering"] * p["block_k"] * (p["block_m"] + p["block_n"] + 2 * _PAD) * size


# ---------------------------------------------------------------------------------------------
# CUDA text

def _vec_type(ctype: str, vector: int) -> str:
    return ctype if vector == 1 else {"float": "float4", "double": "double2"}[ctype]


_LANES = ("x", "y", "z", "w")


@dataclass(frozen=True)
class TileMoves:
    """Loop bodies moving one operand tile: global → registers (`load`), registers → shared
    memory (`store`), and both at once for single buffering (`direct`)."""
    load: str
    store: str
    direct: str


def _tile_moves(which: str, op: Operand, vector: int, ctype: str) -> TileMoves:
    """The tile's contiguous global index (`inner`) is walked `vector` elements at a time, the
    other (`outer`) by rows. Shared memory is k-major for both operands, so a tile whose
    contiguous index is k is stored transposed, element by element."""
    vt = _vec_type(ctype, vector)
    if which == "A":   # logical M×K; smem As[k][m]
        outer, inner = ("m", "k") if op.layout == "row" else ("k", "m")
        extent, limit, origin = {"m": "BM", "k": "BK"}, {"m": "M", "k": "K"}, {"m": "m0", "k": "k0"}
        smem = "As[buf][k][m]"
        ld = "K" if op.layout == "row" else "M"
    else:              # logical K×N; smem Bs[k][n]
        outer, inner = ("k", "n") if op.layout == "row" else ("n", "k")
        extent, limit, origin = {"k": "BK", "n": "BN"}, {"k": "K", "n": "N"}, {"k": "k0", "n": "n0"}
        smem = "Bs[buf][k][n]"
        ld = "N" if op.layout == "row" else "K"
    per_row = f"({extent[inner]} / {vector})"
    coords = (f"            const int idx = threadIdx.x + i * THREADS;\n"
              f"            const int {outer} = idx / {per_row}, {inner} = (idx % {per_row}) * {vector};\n")

    def fetch(dest: str) -> str:
        return (f"            const int g{outer} = {origin[outer]} + {outer}, g{inner} = {origin[inner]} + {inner};\n"
                f"            {dest} = {vt}{{}};\n"
                f"            if (g{outer} < {limit[outer]} && g{inner} < {limit[inner]})\n"
                f"                {dest} = *reinterpret_cast<const {vt}*>({which}_b + (long long)g{outer} * {ld} + g{inner});\n")

    def put(src: str) -> str:
        if vector == 1:
            return f"            {smem} = {src};\n"
        if (which == "A" and inner == "m") or (which == "B" and inner == "n"):
            return f"            *reinterpret_cast<{vt}*>(&{smem}) = {src};\n"
        return "".join(f"            {smem.replace('[k]', f'[k + {j}]')} = {src}.{_LANES[j]};\n"   # transposed
                       for j in range(vector))

    def loop(body: str) -> str:
        return (f"        #pragma unroll\n"
                f"        for (int i = 0; i < {which}_LOADS; ++i) {{\n{coords}{body}        }}\n")

    stage = f"{which.lower()}_stage[i]"
    return TileMoves(load=loop(fetch(stage)), store=loop(put(stage)),
                     direct=loop(f"            {vt} v;\n" + fetch("v") + put("v")))


def _fragment_reads(ctype: str) -> str:
    """Loads of this thread's A column and B row for slice row k (16-byte reads for fp32)."""
    if ctype == "float":
        return ("            #pragma unroll\n"
                "            for (int c = 0; c < TM / 4; ++c) {\n"
                "                const float4 v = *reinterpret_cast<const float4*>(&As[buf][k][c * 4 * THREADS_Y + ty * 4]);\n"
                "                a_frag[c * 4 + 0] = v.x; a_frag[c * 4 + 1] = v.y; a_frag[c * 4 + 2] = v.z; a_frag[c * 4 + 3] = v.w;\n"
                "            }\n"
                "            #pragma unroll\n"
                "            for (int c = 0; c < TN / 4; ++c) {\n"
                "                const float4 v = *reinterpret_cast<const float4*>(&Bs[buf][k][c * 4 * THREADS_X + tx * 4]);\n"
                "                b_frag[c * 4 + 0] = v.x; b_frag[c * 4 + 1] = v.y; b_frag[c * 4 + 2] = v.z; b_frag[c * 4 + 3] = v.w;\n"
                "            }\n")
    return ("            #pragma unroll\n"
            "            for (int i = 0; i < TM; ++i) a_frag[i] = As[buf][k][(i / 4) * 4 * THREADS_Y + ty * 4 + i % 4];\n"
            "            #pragma unroll\n"
            "            for (int j = 0; j < TN; ++j) b_frag[j] = Bs[buf][k][(j / 4) * 4 * THREADS_X + tx * 4 + j % 4];\n")


def _device_code(gp: GemmProblem, p: Point, kernel: str) -> str:
    ctype = gp.acc_ctype
    vec = p["vector"]
    vt = _vec_type(ctype, vec)
    a = _tile_moves("A", gp.a, vec, ctype)
    b = _tile_moves("B", gp.b, vec, ctype)
    consts = (f"constexpr int BM = {p['block_m']}, BN = {p['block_n']}, BK = {p['block_k']};  // block tile\n"
              f"constexpr int TM = {p['thread_m']}, TN = {p['thread_n']};  // thread tile, in {_SUB}x{_SUB} sub-tiles\n"
              f"constexpr int THREADS_X = BN / TN, THREADS_Y = BM / TM, THREADS = THREADS_X * THREADS_Y;\n"
              f"constexpr int WARPS_X = THREADS_X / 8;  // warps of 4 x 8 threads across the thread grid\n"
              f"static_assert(THREADS_X % 8 == 0 && THREADS_Y % 4 == 0, \"warps tile the thread grid\");\n"
              f"constexpr int VEC = {vec};  // elements per global load\n"
              f"constexpr int A_LOADS = BM * BK / (VEC * THREADS), B_LOADS = BK * BN / (VEC * THREADS);\n"
              f"constexpr int PAD = {_PAD};  // smem row padding: conflict-free transposed stores, aligned rows\n"
              f"constexpr int STAGES = {p['buffering']};\n")
    fma = "fmaf" if ctype == "float" else "fma"
    compute = (f"        #pragma unroll\n"
               f"        for (int k = 0; k < BK; ++k) {{\n"
               f"            {ctype} a_frag[TM], b_frag[TN];\n"
               f"{_fragment_reads(ctype)}"
               f"            #pragma unroll\n"
               f"            for (int i = 0; i < TM; ++i)\n"
               f"                #pragma unroll\n"
               f"                for (int j = 0; j < TN; ++j) acc[i][j] = {fma}(a_frag[i], b_frag[j], acc[i][j]);\n"
               f"        }}\n")
    if p["buffering"] == 2:
        movers = (f"    {vt} a_stage[A_LOADS], b_stage[B_LOADS];   // the next slice, on its way to shared memory\n"
                  f"    auto load_tiles = [&](int k0) {{   // global -> registers, zero-filled outside the matrices\n"
                  f"{a.load}{b.load}    }};\n"
                  f"    auto store_tiles = [&](int buf) {{   // registers -> shared memory\n"
                  f"{a.store}{b.store}    }};\n")
        main_loop = ("    load_tiles(0);\n"
                     "    store_tiles(0);\n"
                     "    __syncthreads();\n"
                     "    for (int kt = 0; kt < k_tiles; ++kt) {\n"
                     "        const int buf = kt & 1;\n"
                     "        const bool more = kt + 1 < k_tiles;\n"
                     "        if (more) load_tiles((kt + 1) * BK);   // in flight during the math below\n"
                     "        multiply(buf);\n"
                     "        if (more) store_tiles(buf ^ 1);      // buffer buf^1 was last read before the previous barrier\n"
                     "        __syncthreads();\n"
                     "    }\n")
    else:
        movers = (f"    auto fill_tiles = [&](int k0) {{   // global -> shared memory, zero-filled outside the matrices\n"
                  f"        const int buf = 0;\n"
                  f"{a.direct}{b.direct}    }};\n")
        main_loop = ("    for (int kt = 0; kt < k_tiles; ++kt) {\n"
                     "        fill_tiles(kt * BK);\n"
                     "        __syncthreads();\n"
                     "        multiply(0);\n"
                     "        __syncthreads();   // before the next slice overwrites the tiles\n"
                     "    }\n")
    out_vec = ctype == "float" and gp.out_dtype.name == "f32" and not gp.has_epilogue and gp.is_multiple(gp.N, 4)
    if out_vec:
        write = ("            if (col < N) {\n"
                 "                float4 v;\n"
                 "                v.x = acc[i][j]; v.y = acc[i][j + 1]; v.z = acc[i][j + 2]; v.w = acc[i][j + 3];\n"
                 "                *reinterpret_cast<float4*>(&C_b[(long long)row * N + col]) = v;\n"
                 "            }\n")
    else:
        write = ("            #pragma unroll\n"
                 "            for (int l = 0; l < 4; ++l)\n"
                 f"                if (col + l < N) {store(gp, 'acc[i][j + l]', 'row', 'col + l')}\n")
    epilogue = render_epilogue(gp)
    return f"""{consts}
{epilogue}
// min 1 block/SM: registers go to the tiles (ptxas would otherwise trade them for occupancy and spill)
__global__ void __launch_bounds__(THREADS, 1) {kernel}({kernel_params(gp)}) {{
    __shared__ __align__(16) {ctype} As[STAGES][BK][BM + PAD];   // A slice, transposed: As[k][m]
    __shared__ __align__(16) {ctype} Bs[STAGES][BK][BN + PAD];   // B slice: Bs[k][n]
    // A warp is 4 x 8 threads of the THREADS_Y x THREADS_X grid: its 16-byte fragment reads span
    // 64 B of As and 128 B of Bs per sub-tile (one wavefront each) rather than a 2 x 16 strip's 32 B and 256 B.
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int tx = (warp % WARPS_X) * 8 + lane % 8, ty = (warp / WARPS_X) * 4 + lane / 8;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    {batch_pointer("const " + ctype, "A_b", gp.a.param, gp.a.batched, "M * K")}
    {batch_pointer("const " + ctype, "B_b", gp.b.param, gp.b.batched, "K * N")}
    {batch_pointer(gp.out_dtype.c_type, "C_b", gp.out_param, gp.batch != 1, "M * N")}

    {ctype} acc[TM][TN];
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0;

{movers}    auto multiply = [&](int buf) {{   // acc += As[buf]^T Bs[buf], one rank-1 update per k
{compute}    }};

    const int k_tiles = (K + BK - 1) / BK;
{main_loop}
    #pragma unroll
    for (int i = 0; i < TM; ++i) {{
        const int row = m0 + (i / 4) * 4 * THREADS_Y + ty * 4 + i % 4;
        if (row >= M) continue;
        #pragma unroll
        for (int j = 0; j < TN; j += 4) {{
            const int col = n0 + (j / 4) * 4 * THREADS_X + tx * 4;
{write}        }}
    }}
}}
"""


SKETCHES: list[Sketch] = [SimtGemm()]

SAMPLE_INTENTS: list[str] = [
    "C = A @ B; A: f32[4096, 4096]; B: f32[4096, 4096]",
    "C = A @ B; A: f32[1000, 999]; B: f32[999, 1000]",
    "C = A @ B; A: f32[M, 512]; B: f32[512, 256]; M=777",
    "C = A @ B; A: f32[8, 256, 384]; B: f32[8, 384, 128]",
    "C = A @ B; A: f32[4, 300, 200]; B: f32[200, 100]",
    "C = A @ W.T; A: f32[1024, 768]; W: f32[512, 768]",
    "C = A @ W.T; A: f32[1000, 999]; W: f32[1001, 999]",
    "C = A.T @ B; A: f32[512, 1024]; B: f32[512, 256]",
    "y = gelu(x @ W + b); x: f32[2048, 1024]; W: f32[1024, 4096]; b: f32[4096]",
    "y = relu(A @ B) * 0.5 + R; A: f32[1000, 1000]; B: f32[1000, 1000]; R: f32[1000, 1000]",
    "C = A @ B; A: f64[1024, 1024]; B: f64[1024, 1024]",
    "C = A @ B; A: f64[333, 257]; B: f64[257, 129]",
]
