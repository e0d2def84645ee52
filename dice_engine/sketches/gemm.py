"""GEMM on CUDA cores (fp32, fp64): shared-memory block tiles and register thread tiles.

Each block computes a BM×BN tile of C, marching over K in BK-deep slices staged in shared
memory: A transposed to As[k][m] (so a thread's column of A is a contiguous, conflict-free
vector read) and B as Bs[k][n]. Each thread owns a TM×TN register tile made of 4×4 sub-tiles
strided across the block tile (rows `c*4*THREADS_Y + ty*4 + i`), and a warp is a 4×8 patch of
the thread grid, so each 16-byte shared-memory read of a warp touches 64 B of As and 128 B of Bs
(one wavefront each, on distinct banks). With double buffering the next slice is read from
global memory into registers while the current one is multiplied, and written to the
other shared-memory buffer afterwards (one barrier per slice); single-buffered, each slice
goes straight to shared memory between two barriers. With 3 or 4 buffers (sm_80+) the slices
travel by cp.async through a ring, STAGES - 1 of them in flight while one is multiplied and
no staging registers held: a transposed tile is copied element by element (4- or 8-byte
copies), the others a vector at a time. Measured on an H100, the ring pays where the loads are
scalar (odd leading dimensions) and loses to register staging where they are float4
(`_default_buffering`). Edges and K tails are
zero-filled by predicated loads; vector (float4/double2) loads need a literal leading
dimension that is a multiple of the vector width.

Split-K (`k_splits` > 1), for a long K and an output of too few tiles to fill the SMs (and so
that no thread runs a serial sum over all of a very long K): the block rows of the grid repeat
once per split, each split multiplies a contiguous run of BK slices (folding a block accumulator
into its total every FLUSH_K of K) and stores its raw tile to a
partials workspace the launcher allocates on the stream; a second kernel adds the splits of each
output in split order (deterministic, no atomics), applies the epilogue, and the launcher frees
the workspace on the stream.
"""
# ruff: noqa: E501  (CUDA text is kept one generated line per source line, so it reads as it renders)
from __future__ import annotations

from dataclasses import dataclass

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, dim_c, frame, launcher_params, \
    launcher_signature
from .gemm_common import CP_ASYNC_ANY_HELPER, CP_ASYNC_HELPERS, PTX_BEGIN, PTX_END, GemmProblem, Operand, \
    batch_pointer, gemm_problem, kernel_args, kernel_params, operand_geometry, read_problem, render_epilogue, \
    size_guard, smem_opt_in, store, tiled_grid, tiled_launcher

_SUB = 4   # thread sub-tile edge: one 16-byte (float4) shared-memory read per sub-tile row
_PAD = 4   # shared-memory row padding (elements): keeps transposed stores conflict-free, rows 16-B aligned
# An output with fewer tiles than SMs is where cuBLAS splits K, and its fp32 error on a float64
# truth is then that of a short serial sum (measured on the H200: an unsplit K = 2^19 was 15x
# worse). Such outputs keep each split's serial sum within MAX_SERIAL_K (a constraint) and start
# from ACCURATE_SERIAL_K; serial rounding error grows about linearly with the sum's length.
MAX_SERIAL_K = 16384
ACCURATE_SERIAL_K = 8192
DEEP_SPLIT_MIN_K = 1024   # K per split from which the default split-K tile is 128x128x16 (64+ slices)
# Within a split, each thread adds FLUSH_K of K into a block accumulator, then the block into
# its total (a two-level sum: error grows with FLUSH_K + per-split K / FLUSH_K, not the split's K).
FLUSH_K = 256
_MAX_GRID_Y = 65535
_MERGE_THREADS = 256
_RING_MIN = 3   # buffering from which slices travel by cp.async through a ring


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
            Token("block_m", (64, 128), "rows of C per block (BM)", (Role.TILE,)),
            Token("block_n", (64, 128), "columns of C per block (BN)", (Role.TILE,)),
            Token("block_k", (8, 16), "K slice staged in shared memory per step (BK)", (Role.TILE,)),
            Token("thread_m", (4, 8), "rows of C per thread (TM, in 4-row sub-tiles)", (Role.WORK,)),
            Token("thread_n", (4, 8), "columns of C per thread (TN, in 4-column sub-tiles)", (Role.WORK,)),
            Token("vector", (1, widest), "elements per global load of A and B (16-byte vectors)", (Role.VECTOR,)),
            Token("buffering", (1, 2) + ((3, 4) if arch.has_cp_async else ()),
                  "shared-memory buffers: 2 stages the next slice in registers during the math, 3-4 are a "
                  "cp.async ring with that many slices (sm_80+)", (Role.PIPELINE,)),
            Token("k_splits", (1, 2, 4, 8, 16, 32, 64, 128), "splits of K (split-K): blocks per output tile whose "
                  "partial tiles a second kernel adds in order", (Role.SPLIT,)),
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
            if p["buffering"] >= _RING_MIN:   # dynamic shared memory, opted in past the default
                limit, kind = arch.smem_per_block_optin, "opt-in"
            else:
                limit, kind = arch.smem_per_block_default, "static"
            return None if smem <= limit else f"{smem} B of shared memory ({kind} limit {limit})"

        def splits_fit(p: Point) -> str | None:
            if p["k_splits"] == 1:
                return None
            if not isinstance(gp.M, int):
                return "split-K repeats the block rows per split: it needs a literal M"
            if -(-gp.M // p["block_m"]) * p["k_splits"] > _MAX_GRID_Y:
                return f"{p['k_splits']} splits of {-(-gp.M // p['block_m'])} block rows exceed the grid's y limit"
            if gp.hint(gp.K) < 4 * p["block_k"] * p["k_splits"]:
                return f"k_splits={p['k_splits']} leaves fewer than 4 K slices per split"
            return None

        def accurate(p: Point) -> str | None:
            per_split = -(-gp.hint(gp.K) // p["k_splits"])
            if per_split > MAX_SERIAL_K and _tiles(gp, p["block_m"], p["block_n"]) < arch.sms:
                return (f"k_splits={p['k_splits']} leaves {per_split} of K per split; an output of few tiles "
                        f"needs at most {MAX_SERIAL_K} for library-level fp32 accuracy")
            return None

        return DesignSpace(tokens, [thread_count, tile_loads, loads_per_thread, alignment, registers, shared_memory,
                                    splits_fit, accurate])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        gp = gemm_problem(problem)
        space = self.space(problem, arch)
        # Fewer 128x128 tiles than SMs: small tiles (and split-K). From one tile per SM on, the big
        # tiles win: 128x32768 (256 tiles, K = 32768, B = W.T) ran at 86% of cuBLAS with 128x128x8
        # tiles and 53% with 64x64x16 (H100).
        small = _tiles(gp, 128, 128) < arch.sms
        big_tiles = [(128, 128, 8, 8, 8), (128, 128, 16, 8, 8)]
        small_tiles = [(64, 64, 16, 4, 4), (64, 64, 8, 4, 4)]
        # A long split-K keeps each block's registers (one 256-thread block per SM), so a block
        # steps through K one round trip to memory at a time: big 16-deep slices do twice the work
        # per trip (measured on an H100, 256x524288 @ 524288x256: 128x128x16 tiles at 1.59 ms,
        # 64x64x16 at 2.76, cuBLAS 1.31).
        big_splits = _default_splits(gp, arch, 128, 128)
        long_split = big_splits > 1 and gp.hint(gp.K) // big_splits >= DEEP_SPLIT_MIN_K
        filled = min(gp.hint(gp.M), gp.hint(gp.N)) >= 128     # no mostly empty 128-wide tile
        tiles = [(128, 128, 16, 8, 8)] if small and long_split and filled else []
        tiles += small_tiles if small else big_tiles + small_tiles
        return space.first_legal(
            {"block_m": bm, "block_n": bn, "block_k": bk, "thread_m": tm, "thread_n": tn, "vector": vector,
             "buffering": _default_buffering(gp, arch, vector), "k_splits": splits}
            for bm, bn, bk, tm, tn in tiles
            for splits in (_default_splits(gp, arch, bm, bn), 1)
            for vector in sorted(space.token("vector").choices, reverse=True))

    # -- rendering ------------------------------------------------------------------------------

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        gp = gemm_problem(problem)
        kernel = f"{name}_kernel"
        threads = (point["block_m"] // point["thread_m"]) * (point["block_n"] // point["thread_n"])
        merge = f"{name}_merge_kernel"
        splits = point["k_splits"]
        device = _device_code(gp, point, kernel, merge)
        params = launcher_params(problem)
        # the ring's shared memory is dynamic (it may pass 48 KiB); the other buffers are static
        dynamic_smem = _smem_bytes(point, gp.in_dtype.size) if point["buffering"] >= _RING_MIN else 0
        if splits == 1:
            launcher = tiled_launcher(gp, launcher_signature(name, params), f"dice_{name}::{kernel}", point,
                                      threads, dynamic_smem)
        else:
            launcher = _split_launcher(gp, launcher_signature(name, params), name, kernel, merge, point, threads,
                                       dynamic_smem)
        strategy = (f"{gp.in_dtype} GEMM on CUDA cores, {point['block_m']}x{point['block_n']}x{point['block_k']} "
                    f"block tiles, {point['thread_m']}x{point['thread_n']} per thread, "
                    f"{_buffering_words(point['buffering'])} shared memory, "
                    f"{point['vector']}-wide loads, A {gp.a.layout}-major, B {gp.b.layout}-major"
                    f"{f', split-K over {splits} splits merged in order by a second kernel' if splits > 1 else ''}"
                    f"{', fused epilogue' if gp.has_epilogue else ''}")
        source = frame(name=name, strategy=strategy, tokens=point, device_code=device, launcher_code=launcher)
        grid_x, grid_y, batch = tiled_grid(gp, point)
        launches = [Launch(kernel, (grid_x, grid_y * splits, batch), (threads, 1, 1),
                           _smem_bytes(point, gp.in_dtype.size))]
        kernel_names = [f"dice_{name}::{kernel}"]
        outputs = gp.hint(gp.M) * gp.hint(gp.N)
        if splits > 1:
            launches.append(Launch(merge, (_merge_blocks(outputs), 1, batch), (_MERGE_THREADS, 1, 1), 0))
            kernel_names.append(f"dice_{name}::{merge}")
        return RenderedKernel(
            sketch=self.name, tokens=dict(point), source=source, kernel_names=kernel_names,
            launcher=launcher, params=params, launches=launches, k_splits=splits,
            workspace_bytes=splits * outputs * batch * gp.in_dtype.size if splits > 1 else 0,
            async_slices=point["buffering"] - 1 if point["buffering"] >= _RING_MIN else 0,
            summary=f"simt {point['block_m']}x{point['block_n']}x{point['block_k']} "
                    f"t{point['thread_m']}x{point['thread_n']} v{point['vector']} buf{point['buffering']}"
                    f"{f' splitk{splits}' if splits > 1 else ''}")


def _default_buffering(gp: GemmProblem, arch: ArchSpec, vector: int) -> int:
    """Scalar f32 loads (a leading dimension that is no multiple of 4) go through a 4-slice cp.async
    ring on sm_80+: 8205x2949 @ 2949x5921 ran at 81% of cuBLAS with it and 69% staged in registers
    (and 128x32768 @ W.T at 72%, where KernelBench's run G had 64% staged). With float4 loads register staging won at every
    KernelBench shape measured (the ring at 0.67-0.97 of its speed: H100, benchmarks/GEMM_SWEEP_H100.md)."""
    ring = vector == 1 and gp.in_dtype.name == "f32" and arch.has_cp_async
    return 4 if ring else 2


def _buffering_words(buffering: int) -> str:
    if buffering >= _RING_MIN:
        return f"{buffering}-slice cp.async ring in"
    return "double-buffered" if buffering == 2 else "single-buffered"


def _default_splits(gp: GemmProblem, arch: ArchSpec, block_m: int, block_n: int) -> int:
    """Splits of K for tiles of block_m x block_n: for an output of fewer tiles than SMs, enough
    blocks for two per SM and no split longer than ACCURATE_SERIAL_K; else 1."""
    tiles = _tiles(gp, block_m, block_n)
    if tiles >= arch.sms:
        return 1
    want = max(-(-2 * arch.sms // tiles), -(-gp.hint(gp.K) // ACCURATE_SERIAL_K))
    splits = 1
    while splits < want and splits < 128:
        splits *= 2
    return splits


def _tiles(gp: GemmProblem, block_m: int, block_n: int) -> int:
    return -(-gp.hint(gp.M) // block_m) * -(-gp.hint(gp.N) // block_n) * gp.hint(gp.batch)


def _merge_blocks(outputs: int) -> int:
    return min(-(-outputs // _MERGE_THREADS), _MAX_GRID_Y)


def _split_launcher(gp: GemmProblem, signature: str, name: str, kernel: str, merge: str, point: Point,
                    threads: int, dynamic_smem: int) -> str:
    """Split-K: block rows repeat per split (grid y), partial tiles go to a stream-ordered
    workspace [batch][split][M][N], the merge kernel adds them in split order and frees nothing
    itself; the launcher frees the workspace on the stream after the merge."""
    splits = point["k_splits"]
    outputs = f"(long long)({dim_c(gp.M)}) * (long long)({dim_c(gp.N)})"
    merge_blocks = f"(unsigned)((outputs + {_MERGE_THREADS - 1}) / {_MERGE_THREADS} < {_MAX_GRID_Y} ? " \
                   f"(outputs + {_MERGE_THREADS - 1}) / {_MERGE_THREADS} : {_MAX_GRID_Y})"
    return (f"{signature} {{\n"
            f"{size_guard(gp)}{smem_opt_in(f'dice_{name}::{kernel}', dynamic_smem)}"
            f"    const long long outputs = {outputs};\n"
            f"    {gp.acc_ctype}* partials = nullptr;   // [batch][split][M][N] raw partial tiles\n"
            f"    if (cudaMallocAsync((void**)&partials, (size_t){splits} * (size_t)({dim_c(gp.batch)}) * outputs * "
            f"sizeof({gp.acc_ctype}), stream) != cudaSuccess) return;\n"
            f"    const dim3 grid_dims(({dim_c(gp.N)} + {point['block_n']} - 1) / {point['block_n']}, "
            f"{splits} * (({dim_c(gp.M)} + {point['block_m']} - 1) / {point['block_m']}), {dim_c(gp.batch)});\n"
            f"    dice_{name}::{kernel}<<<grid_dims, {threads}, {dynamic_smem}, stream>>>({kernel_args(gp)}, partials);\n"
            f"    const dim3 merge_dims({merge_blocks}, 1, {dim_c(gp.batch)});\n"
            f"    dice_{name}::{merge}<<<merge_dims, {_MERGE_THREADS}, 0, stream>>>({kernel_args(gp)}, partials);\n"
            f"    cudaFreeAsync(partials, stream);\n}}\n")


def _min_blocks(p: Point, ctype: str) -> int:
    """Blocks per SM that ptxas must leave room for. Two blocks of 256 threads (16 warps, at most
    128 registers a thread) ran 17-36% faster than one on an H100 at KernelBench's GEMM shapes
    (4096^3, 1024x8192x8192 with W.T, batched 128x512x1024x2048), small spills included: 8 warps
    do not hide the shared-memory and FMA latencies of an 8x8 tile. Bigger blocks keep one
    (two would leave 64 registers for a 4x8 tile's 32 accumulators and its fragments), and so
    does split-K, whose folded totals double the accumulators, and so do doubles (two registers
    each)."""
    threads = (p["block_m"] // p["thread_m"]) * (p["block_n"] // p["thread_n"])
    return 2 if threads <= 256 and p["k_splits"] == 1 and ctype == "float" else 1


def _min_blocks_comment(p: Point, ctype: str) -> str:
    if _min_blocks(p, ctype) == 2:
        return "min 2 blocks/SM: 16 warps hide the fragment-read and FMA latencies that 8 do not"
    return "min 1 block/SM: registers go to the tiles (ptxas would otherwise trade them for occupancy and spill)"


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
    memory (`store`), both at once for single buffering (`direct`), and global → shared memory
    by cp.async for the ring (`copy`)."""
    load: str
    store: str
    direct: str
    copy: str


def _tile_moves(which: str, op: Operand, vector: int, ctype: str) -> TileMoves:
    """The tile's contiguous global index (`inner`) is walked `vector` elements at a time, the
    other (`outer`) by rows. Shared memory is k-major for both operands, so a tile whose
    contiguous index is k is stored transposed, element by element."""
    vt = _vec_type(ctype, vector)
    g = operand_geometry(which, op)
    outer, inner, ld = g["outer"], g["inner"], g["ld"]
    smem = "As[buf][k][m]" if which == "A" else "Bs[buf][k][n]"
    transposed = inner == "k"
    per_row = f"({g['inner_extent']} / {vector})"
    coords = (f"            const int idx = threadIdx.x + i * THREADS;\n"
              f"            const int {outer} = idx / {per_row}, {inner} = (idx % {per_row}) * {vector};\n")
    at = (f"            const int g{outer} = {g['outer_origin']} + {outer}, g{inner} = {g['inner_origin']} + {inner};\n")
    inside = f"g{outer} < {g['outer_limit']} && g{inner} < {g['inner_limit']}"
    address = f"{which}_b + (long long)g{outer} * {ld} + g{inner}"

    def fetch(dest: str) -> str:
        return (f"{at}"
                f"            {dest} = {vt}{{}};\n"
                f"            if ({inside})\n"
                f"                {dest} = *reinterpret_cast<const {vt}*>({address});\n")

    def put(src: str) -> str:
        if vector == 1:
            return f"            {smem} = {src};\n"
        if not transposed:
            return f"            *reinterpret_cast<{vt}*>(&{smem}) = {src};\n"
        return "".join(f"            {smem.replace('[k]', f'[k + {j}]')} = {src}.{_LANES[j]};\n"
                       for j in range(vector))

    def copy() -> str:
        size = {"float": 4, "double": 8}[ctype]
        head = (f"{at}"
                f"            const bool valid = {inside};\n"
                f"            const {ctype}* src = valid ? {address} : {which}_b;\n")
        if vector == 1 or not transposed:
            return head + f"            cp_async_to<{vector * size}>(&{smem}, src, valid);\n"
        return head + "".join(f"            cp_async_to<{size}>(&{smem.replace('[k]', f'[k + {j}]')}, src + {j}, valid);\n"
                              for j in range(vector))   # one element per copy

    def loop(body: str) -> str:
        return (f"        #pragma unroll\n"
                f"        for (int i = 0; i < {which}_LOADS; ++i) {{\n{coords}{body}        }}\n")

    stage = f"{which.lower()}_stage[i]"
    return TileMoves(load=loop(fetch(stage)), store=loop(put(stage)),
                     direct=loop(f"            {vt} v;\n" + fetch("v") + put("v")), copy=loop(copy()))


def _tile_arrays(p: Point, ctype: str) -> str:
    """Declarations of the shared-memory slices As[STAGES][BK][BM + PAD] and Bs[STAGES][BK][BN + PAD]."""
    if p["buffering"] < _RING_MIN:
        return (f"    __shared__ __align__(16) {ctype} As[STAGES][BK][BM + PAD];   // A slice, transposed: As[k][m]\n"
                f"    __shared__ __align__(16) {ctype} Bs[STAGES][BK][BN + PAD];   // B slice: Bs[k][n]\n")
    return (f"    extern __shared__ __align__(16) {ctype} ring[];   // STAGES slices of A, then STAGES of B\n"
            f"    auto As = reinterpret_cast<{ctype} (*)[BK][BM + PAD]>(ring);   // A slice, transposed: As[buf][k][m]\n"
            f"    auto Bs = reinterpret_cast<{ctype} (*)[BK][BN + PAD]>(ring + STAGES * BK * (BM + PAD));   // Bs[buf][k][n]\n")


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


def _device_code(gp: GemmProblem, p: Point, kernel: str, merge: str) -> str:
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
              f"constexpr int STAGES = {p['buffering']};\n"
              f"constexpr int K_SPLITS = {p['k_splits']};  // splits of K (block rows repeat per split)\n")
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
    helpers = ""
    if p["buffering"] >= _RING_MIN:
        helpers = f"\n{PTX_BEGIN}{CP_ASYNC_HELPERS}{CP_ASYNC_ANY_HELPER}{PTX_END}\n"
        movers = (f"    auto copy_tiles = [&](int k0, int buf) {{   // global -> shared memory by cp.async, zero-filled outside the matrices\n"
                  f"{a.copy}{b.copy}    }};\n")
        main_loop = ("    #pragma unroll\n"
                     "    for (int s = 0; s < STAGES - 1; ++s) {   // the ring's first slices\n"
                     "        if (kt_begin + s < kt_end) copy_tiles((kt_begin + s) * BK, s);\n"
                     "        cp_async_commit();   // one group per slice, empty past the end: the wait count stays fixed\n"
                     "    }\n"
                     "    for (int kt = kt_begin; kt < kt_end; ++kt) {\n"
                     "        const int buf = (kt - kt_begin) % STAGES;\n"
                     "        cp_async_wait<STAGES - 2>();   // this thread's copies of slice kt have landed\n"
                     "        __syncthreads();   // everyone's have, and slice kt - 1's buffer is read by all\n"
                     "        if (kt + STAGES - 1 < kt_end) copy_tiles((kt + STAGES - 1) * BK, (buf + STAGES - 1) % STAGES);\n"
                     "        cp_async_commit();\n"
                     "        multiply(buf);\n"
                     "    }\n")
    elif p["buffering"] == 2:
        movers = (f"    {vt} a_stage[A_LOADS], b_stage[B_LOADS];   // the next slice, on its way to shared memory\n"
                  f"    auto load_tiles = [&](int k0) {{   // global -> registers, zero-filled outside the matrices\n"
                  f"{a.load}{b.load}    }};\n"
                  f"    auto store_tiles = [&](int buf) {{   // registers -> shared memory\n"
                  f"{a.store}{b.store}    }};\n")
        main_loop = ("    load_tiles(kt_begin * BK);\n"
                     "    store_tiles(0);\n"
                     "    __syncthreads();\n"
                     "    for (int kt = kt_begin; kt < kt_end; ++kt) {\n"
                     "        const int buf = (kt - kt_begin) & 1;\n"
                     "        const bool more = kt + 1 < kt_end;\n"
                     "        if (more) load_tiles((kt + 1) * BK);   // in flight during the math below\n"
                     "        multiply(buf);\n"
                     "        if (more) store_tiles(buf ^ 1);      // buffer buf^1 was last read before the previous barrier\n"
                     "        __syncthreads();\n"
                     "    }\n")
    else:
        movers = (f"    auto fill_tiles = [&](int k0) {{   // global -> shared memory, zero-filled outside the matrices\n"
                  f"        const int buf = 0;\n"
                  f"{a.direct}{b.direct}    }};\n")
        main_loop = ("    for (int kt = kt_begin; kt < kt_end; ++kt) {\n"
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
    total = ""
    if p["k_splits"] > 1:   # raw partial tile; the merge kernel applies the epilogue
        write = ("            #pragma unroll\n"
                 "            for (int l = 0; l < 4; ++l)\n"
                 "                if (col + l < N) partials_b[(long long)row * N + col + l] = total[i][j + l];\n")
        flush = "        if ((kt - kt_begin + 1) % FLUSH_SLICES == 0) fold();   // a block of FLUSH_K joins the total\n"
        main_loop = main_loop.replace("multiply(buf);\n", "multiply(buf);\n" + flush)
        main_loop = main_loop.replace("multiply(0);\n", "multiply(0);\n" + flush) + "    fold();\n"
        total = (f"    constexpr int FLUSH_SLICES = {max(1, FLUSH_K // p['block_k'])};   // BK slices per block sum\n"
                 f"    {ctype} total[TM][TN];   // the split's sum of folded blocks\n"
                 f"    #pragma unroll\n"
                 f"    for (int i = 0; i < TM; ++i)\n"
                 f"        #pragma unroll\n"
                 f"        for (int j = 0; j < TN; ++j) total[i][j] = 0;\n"
                 f"    auto fold = [&]() {{\n"
                 f"        #pragma unroll\n"
                 f"        for (int i = 0; i < TM; ++i)\n"
                 f"            #pragma unroll\n"
                 f"            for (int j = 0; j < TN; ++j) {{\n"
                 f"                total[i][j] += acc[i][j];\n"
                 f"                acc[i][j] = 0;\n"
                 f"            }}\n"
                 f"    }};\n")
    epilogue = render_epilogue(gp)
    partials_param = f", {ctype}* __restrict__ partials" if p["k_splits"] > 1 else ""
    partials_ptr = ("\n    // this split's partial tile: partials[batch][split][M][N]\n"
                    f"    {ctype}* partials_b = partials + ((long long)blockIdx.z * K_SPLITS + split) * M * N;"
                    if p["k_splits"] > 1 else "")
    merge_code = "" if p["k_splits"] == 1 else f"""

// Stage 2: adds the K_SPLITS partial tiles of each output in split order, then the epilogue.
__global__ void __launch_bounds__({_MERGE_THREADS}) {merge}({kernel_params(gp)}, const {ctype}* __restrict__ partials) {{
    {batch_pointer(gp.out_dtype.c_type, "C_b", gp.out_param, gp.batch != 1, "M * N")}
    const long long outputs = (long long)M * N;
    const {ctype}* mine = partials + (long long)blockIdx.z * K_SPLITS * outputs;
    for (long long index = (long long)blockIdx.x * {_MERGE_THREADS} + threadIdx.x; index < outputs;
         index += (long long)gridDim.x * {_MERGE_THREADS}) {{
        {ctype} sum = mine[index];
        for (int split = 1; split < K_SPLITS; ++split) sum += mine[split * outputs + index];
        const int row = (int)(index / N), col = (int)(index % N);
        {store(gp, "sum", "row", "col")}
    }}
}}"""
    return f"""{consts}{helpers}
{epilogue}
// {_min_blocks_comment(p, ctype)}
__global__ void __launch_bounds__(THREADS, {_min_blocks(p, ctype)}) {kernel}({kernel_params(gp)}{partials_param}) {{
{_tile_arrays(p, ctype)}    // A warp is 4 x 8 threads of the THREADS_Y x THREADS_X grid: its 16-byte fragment reads span
    // 64 B of As and 128 B of Bs per sub-tile (one wavefront each) rather than a 2 x 16 strip's 32 B and 256 B.
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int tx = (warp % WARPS_X) * 8 + lane % 8, ty = (warp / WARPS_X) * 4 + lane / 8;
    const int m_tiles = (M + BM - 1) / BM;
    const int split = blockIdx.y / m_tiles;   // 0 unless split-K
    const int m0 = (blockIdx.y % m_tiles) * BM, n0 = blockIdx.x * BN;
    // This split's run of BK slices of K.
    const int k_tiles = (K + BK - 1) / BK;
    const int split_tiles = (k_tiles + K_SPLITS - 1) / K_SPLITS;
    const int kt_begin = split * split_tiles;
    const int kt_end = kt_begin + split_tiles < k_tiles ? kt_begin + split_tiles : k_tiles;
    {batch_pointer("const " + ctype, "A_b", gp.a.param, gp.a.batched, "M * K")}
    {batch_pointer("const " + ctype, "B_b", gp.b.param, gp.b.batched, "K * N")}
    {batch_pointer(gp.out_dtype.c_type, "C_b", gp.out_param, gp.batch != 1, "M * N")}{partials_ptr}

    {ctype} acc[TM][TN];
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0;

{total}{movers}    auto multiply = [&](int buf) {{   // acc += As[buf]^T Bs[buf], one rank-1 update per k
{compute}    }};

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
}}{merge_code}
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
    "C = A @ B; A: f32[256, 524288]; B: f32[524288, 256]",
]
