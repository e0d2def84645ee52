"""Permutes (`x.T`, `transpose(x, a, b)`, any rank): two sketches.

Both first simplify the permutation: size-1 dims are dropped and input dims that stay adjacent
and in order are merged, so a [B, H, S, D] -> [B, S, H, D] permute becomes a rank-3 problem
and a permute that only moves size-1 dims becomes a plain copy.

- `transpose.tiled`: the input's last dim moves. Each block stages a TILE x TILE tile of the
  two dims that trade places through shared memory padded to TILE x (TILE+1) (the +1 puts a
  column's elements in distinct banks; narrow accesses pad one 32-bit word instead), so both
  the global read and the global write run along contiguous memory. Remaining dims are batch
  dims, folded into the block index.
- `transpose.gather`: the last dim stays last. Rows are copied as contiguous vectors; only the
  row's base offset is permuted (a gather-copy, no shared memory).

Both fuse an elementwise prologue (on the operand) and epilogue (on the result).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..arch import ArchSpec
from ..ir.graph import Dim
from ..ir.patterns import Problem
from .base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, frame, launcher_params,
                   launcher_signature, load_as_compute, store_from_compute)
from .fusion import (PACK, fusion_note, fusion_unsupported, has_epilogue, has_prologue, kernel_args,
                    kernel_params, load_operand, store_output, widest_bytes)

HINT = 4096    # extent assumed for unbound symbols when sizing launches for the cost model


# ---------------------------------------------------------------------------------------------
# The simplified permutation

Extent = tuple[Dim, ...]   # a merged extent: the product of these original dims


def _c(extent: Extent) -> str:
    """An extent as a 64-bit C expression (symbols are launcher/kernel parameters)."""
    known = math.prod(d for d in extent if isinstance(d, int))
    symbols = [d for d in extent if isinstance(d, str)]
    if not symbols:
        return f"{known}LL"
    factors = [f"(long long){s}" for s in symbols] + ([str(known)] if known != 1 else [])
    return factors[0] if len(factors) == 1 else "(" + " * ".join(factors) + ")"


def _known(extent: Extent) -> int | None:
    return math.prod(extent) if all(isinstance(d, int) for d in extent) else None  # type: ignore[arg-type]


def _value(problem: Problem, extent: Extent) -> int:
    """The extent at the intent's symbol values (unbound symbols at the hint size)."""
    return math.prod(problem.program.concrete_shape(extent, HINT))


@dataclass(frozen=True)
class Layout:
    """A permute after dropping size-1 dims and merging dims that move together.
    `sizes` are the input extents; output dim i is input dim `perm[i]`."""
    sizes: tuple[Extent, ...]
    perm: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.sizes)

    def in_stride(self, d: int) -> Extent:
        return tuple(f for s in self.sizes[d + 1:] for f in s)

    def out_stride(self, d: int) -> Extent:
        """The output stride of input dim d."""
        pos = self.perm.index(d)
        return tuple(f for p in self.perm[pos + 1:] for f in self.sizes[p])

    @property
    def numel(self) -> Extent:
        return tuple(f for s in self.sizes for f in s)

    @property
    def moves_last_dim(self) -> bool:
        return self.rank >= 2 and self.perm[-1] != self.rank - 1


def simplify(problem: Problem) -> Layout:
    anchor = problem.anchor
    assert anchor is not None
    shape = anchor.args[0].shape
    kept = [d for d in range(len(shape)) if shape[d] != 1]
    shape = tuple(shape[d] for d in kept)
    perm = [kept.index(d) for d in anchor.attr("dims") if d in kept]   # renumbered without size-1 dims
    groups: list[list[int]] = []            # runs of input dims that stay adjacent, output order
    for d in perm:
        if groups and d == groups[-1][-1] + 1:
            groups[-1].append(d)
        else:
            groups.append([d])
    by_input = sorted(groups, key=lambda g: g[0])
    sizes = tuple(tuple(shape[d] for d in g) for g in by_input)
    new_perm = tuple(by_input.index(g) for g in groups)
    return Layout(sizes, new_perm)


# ---------------------------------------------------------------------------------------------
# transpose.tiled

def tile_padding(elem_bytes: int, vec: int) -> int:
    """Padding columns for the shared tile: the classic +1 element when a thread moves 4 or more
    bytes per access, one 32-bit word when it moves fewer (2-byte elements one at a time get
    64x66), so that tile rows start one bank apart either way."""
    return max(1, 4 // (elem_bytes * vec))


class TiledTranspose(Sketch):
    name = "transpose.tiled"
    pattern = "transpose"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        if problem.anchor is None or problem.anchor.op != "permute":
            return "transpose.tiled serves permute"
        if not simplify(problem).moves_last_dim:
            return "the permute keeps the last dim in place (a gather-copy, not a tiled transpose)"
        return fusion_unsupported(problem)

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        layout = simplify(problem)
        rows, cols = layout.sizes[layout.perm[-1]], layout.sizes[-1]
        elem = problem.anchor.dtype.size
        widest = widest_bytes(problem)

        def vector_fits(p: Point) -> str | None:
            if p["vec"] * widest > 16:
                return f"{p['vec']} x {widest}-byte elements exceed a 16-byte access"
            if p["vec"] > 1 and not all((n := _known(d)) and n % p["vec"] == 0 for d in (rows, cols)):
                return f"vec={p['vec']} needs both transposed extents to be known multiples of it"
            return None

        def threads_fit(p: Point) -> str | None:
            threads = p["tile"] // p["vec"] * p["block_rows"]
            if p["tile"] // p["vec"] < 8:
                return "fewer than 8 threads per tile row"
            if not 64 <= threads <= arch.max_threads_per_block:
                return f"{threads} threads per block (want 64..{arch.max_threads_per_block})"
            if p["tile"] * p["tile"] // threads > 32:
                return "more than 32 elements per thread"
            return None

        def smem_fits(p: Point) -> str | None:
            need = p["tile"] * (p["tile"] + tile_padding(elem, p["vec"])) * elem
            return None if need <= arch.smem_per_block_default else f"tile needs {need} B of shared memory"

        def conflict_free(p: Point) -> str | None:
            # Packs wider than a word, or a warp split over two tile rows, leave lanes of one
            # column read (or row write) in one bank on different words, whatever the padding.
            if p["vec"] == 1 or (p["vec"] * elem <= 4 and p["tile"] // p["vec"] >= 32):
                return None
            return f"vec={p['vec']} on a {p['tile']}-wide tile of {elem}-byte elements: shared bank conflicts"

        return DesignSpace(
            [Token("tile", (32, 64), "edge of the square tile staged in shared memory", (Role.TILE,)),
             Token("block_rows", (2, 4, 8, 16), "thread rows per block; each sweeps tile/block_rows rows",
                   (Role.THREADS,)),
             Token("vec", (1, 2, 4), "consecutive elements per thread per global access", (Role.VECTOR,))],
            [vector_fits, threads_fit, smem_fits, conflict_free])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        layout = simplify(problem)
        rows, cols = layout.sizes[layout.perm[-1]], layout.sizes[-1]
        elem = problem.anchor.dtype.size
        small = min(_value(problem, rows), _value(problem, cols)) < 64
        tile = 32 if small or elem == 8 else 64
        space = self.space(problem, arch)
        # The widest access the space allows (conflict_free: at most 4 bytes, a full warp on one
        # tile row); with 4-byte elements 1 per lane already makes 128-byte warp accesses.
        for vec in (4, 2, 1):
            point = {"tile": tile, "vec": vec, "block_rows": 256 * vec // tile}
            if space.is_legal(point):
                return point
        raise AssertionError("vec=1 is always legal")

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        layout = simplify(problem)
        tile, vec, block_rows = point["tile"], point["vec"], point["block_rows"]
        pad = tile_padding(problem.anchor.dtype.size, vec)
        threads_x = tile // vec
        row_dim, col_dim = layout.perm[-1], layout.rank - 1
        rows, cols = layout.sizes[row_dim], layout.sizes[col_dim]
        batch_dims = [d for d in range(layout.rank) if d not in (row_dim, col_dim)]
        anchor = problem.anchor
        in_t = anchor.dtype.c_type
        out_t = problem.output.dtype.c_type
        kernel = f"{name}_kernel"

        batch_lines = "".join(
            f"    const long long batch_{d} = block_id % {_c(layout.sizes[d])};"
            f"  block_id /= {_c(layout.sizes[d])};\n"
            for d in reversed(batch_dims))
        in_base = " + ".join([f"batch_{d} * {_c(layout.in_stride(d))}" for d in batch_dims]) or "0"
        out_base = " + ".join([f"batch_{d} * {_c(layout.out_stride(d))}" for d in batch_dims]) or "0"

        # Load phase: a thread reads `vec` consecutive input elements of one tile row.
        operand = anchor.args[0]
        indent = " " * 12
        if has_prologue(problem):
            load_body, values = load_operand(problem, "in_offset", vec, indent)
            load_body += "".join(
                f"{indent}tile[r][tx * kVec + {k}] = {store_from_compute(anchor.dtype, v)};\n"
                for k, v in enumerate(values))
        else:   # a raw copy: no conversion, every bit pattern survives
            load_body = (f"{indent}const Pack<{in_t}, kVec> pack = "
                         f"*reinterpret_cast<const Pack<{in_t}, kVec>*>({operand.name} + in_offset);\n"
                         f"{indent}#pragma unroll\n"
                         f"{indent}for (int k = 0; k < kVec; ++k) tile[r][tx * kVec + k] = pack.v[k];\n")

        # Store phase: a thread writes `vec` consecutive output elements of one tile column.
        if has_epilogue(problem):
            tile_values = [load_as_compute(anchor.dtype, f"tile[tx * kVec + {k}][c]") for k in range(vec)]
            store_body = store_output(problem, "out_offset", tile_values, indent)
        else:
            out_name = problem.program.output_name
            store_body = (f"{indent}Pack<{out_t}, kVec> result;\n"
                          f"{indent}#pragma unroll\n"
                          f"{indent}for (int k = 0; k < kVec; ++k) result.v[k] = tile[tx * kVec + k][c];\n"
                          f"{indent}*reinterpret_cast<Pack<{out_t}, kVec>*>({out_name} + out_offset)"
                          f" = result;\n")

        tile_t = in_t
        device = f"""{PACK}

constexpr int kTile = {tile};            // tile edge (elements)
constexpr int kVec = {vec};              // consecutive elements per thread per access
constexpr int kThreadsX = kTile / kVec;  // threads across a tile row
constexpr int kBlockRows = {block_rows};       // thread rows; each sweeps kTile / kBlockRows tile rows
constexpr int kPad = {pad};              // padding columns: one 32-bit word per kVec-element run

// One block moves one kTile x kTile tile: input rows index dim {row_dim} (it becomes the output's
// last dim), input columns index the input's last dim.
__global__ void __launch_bounds__(kThreadsX * kBlockRows)
{kernel}({kernel_params(problem)}) {{
    // +kPad columns: a tile column's elements fall in distinct banks, so the column-wise reads
    // of the store phase are conflict-free like the row-wise writes of the load phase.
    __shared__ {tile_t} tile[kTile][kTile + kPad];

    const long long rows = {_c(rows)};            // extent of the input dim that becomes last
    const long long cols = {_c(cols)};            // extent of the input's last dim
    const long long in_row_stride = {_c(layout.in_stride(row_dim))};
    const long long out_col_stride = {_c(layout.out_stride(col_dim))};
    const long long tiles_c = (cols + kTile - 1) / kTile;
    const long long tiles_r = (rows + kTile - 1) / kTile;

    // Column tiles vary fastest, so neighbouring blocks read neighbouring input memory.
    long long block_id = blockIdx.x;
    const long long col0 = block_id % tiles_c * kTile;  block_id /= tiles_c;
    const long long row0 = block_id % tiles_r * kTile;  block_id /= tiles_r;
{batch_lines}    const long long in_base = {in_base};
    const long long out_base = {out_base};
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;

    #pragma unroll
    for (int pass = 0; pass < kTile / kBlockRows; ++pass) {{
        const int r = pass * kBlockRows + ty;
        const long long row = row0 + r;
        const long long col = col0 + tx * kVec;   // kVec divides cols: a vector is all in or all out
        if (row < rows && col < cols) {{
            const long long in_offset = in_base + row * in_row_stride + col;
{load_body}        }}
    }}
    __syncthreads();   // every thread reaches this: no early exits above

    #pragma unroll
    for (int pass = 0; pass < kTile / kBlockRows; ++pass) {{
        const int c = pass * kBlockRows + ty;
        const long long col = col0 + c;           // the output row
        const long long row = row0 + tx * kVec;   // the output column
        if (col < cols && row < rows) {{
            const long long out_offset = out_base + col * out_col_stride + row;
{store_body}        }}
    }}
}}"""
        params = launcher_params(problem)
        tiles_expr = " * ".join(f"(({_c(s)} + kTile - 1) / kTile)" if d in (row_dim, col_dim) else _c(s)
                                for d, s in enumerate(layout.sizes))
        launcher = f"""{launcher_signature(name, params)} {{
    using namespace dice_{name};
    const long long blocks = {tiles_expr};
    if (blocks == 0) return;
    {kernel}<<<dim3((unsigned)blocks), dim3(kThreadsX, kBlockRows), 0, stream>>>({kernel_args(problem)});
}}"""
        tokens = dict(point)
        strategy = (f"tiled transpose through a padded {tile}x{tile + pad} shared-memory tile, "
                    f"{vec} element(s) per access, {threads_x}x{block_rows} threads"
                    f"{fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=tokens, device_code=device,
                       launcher_code=launcher)
        blocks = math.prod(-(-_value(problem, s) // tile) if d in (row_dim, col_dim) else _value(problem, s)
                           for d, s in enumerate(layout.sizes))
        launch = Launch(kernel, (max(blocks, 1), 1, 1), (threads_x, block_rows, 1),
                        tile * (tile + pad) * anchor.dtype.size)
        return RenderedKernel(self.name, tokens, source, [f"dice_{name}::{kernel}"], launcher, params,
                              [launch], f"tiled {tile}x{tile + pad}, vec={vec}, {threads_x}x{block_rows}")


# ---------------------------------------------------------------------------------------------
# transpose.gather

class GatherCopy(Sketch):
    name = "transpose.gather"
    pattern = "transpose"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        if problem.anchor is None or problem.anchor.op != "permute":
            return "transpose.gather serves permute"
        if simplify(problem).moves_last_dim:
            return "the permute moves the last dim (needs the tiled transpose)"
        return fusion_unsupported(problem)

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        inner = self._inner(problem)
        widest = widest_bytes(problem)

        def vector_fits(p: Point) -> str | None:
            if p["vec"] * widest > 16:
                return f"{p['vec']} x {widest}-byte elements exceed a 16-byte access"
            if p["vec"] > 1 and not ((n := _known(inner)) and n % p["vec"] == 0):
                return f"vec={p['vec']} needs the row length to be a known multiple of it"
            return None

        def threads_fit(p: Point) -> str | None:
            ok = p["threads"] <= arch.max_threads_per_block
            return None if ok else f"{p['threads']} threads exceed the block limit"

        return DesignSpace(
            [Token("vec", (1, 2, 4, 8, 16), "consecutive elements per thread per access", (Role.VECTOR,)),
             Token("threads", (128, 256, 512), "threads per block", (Role.THREADS,)),
             Token("items", (1, 2, 4), "vectors per thread per grid-stride step (loads in flight)",
                   (Role.WORK,))],
            [vector_fits, threads_fit])

    @staticmethod
    def _inner(problem: Problem) -> Extent:
        layout = simplify(problem)
        return layout.sizes[-1] if layout.rank else ()

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        space = self.space(problem, arch)
        widest = widest_bytes(problem)
        for vec in (16 // widest, 8 // widest, 4 // widest, 2, 1):
            point = {"vec": max(vec, 1), "threads": 256, "items": 2 if vec > 1 else 4}
            if space.is_legal(point):
                return point
        raise AssertionError("vec=1 is always legal")

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        layout = simplify(problem)
        vec, threads, items = point["vec"], point["threads"], point["items"]
        anchor = problem.anchor
        kernel = f"{name}_kernel"
        inner = self._inner(problem)
        out_dims = list(layout.perm[:-1])        # output order, the last (kept) dim excluded
        numel = layout.numel

        decompose = "".join(
            f"            const long long coord_{d} = row % {_c(layout.sizes[d])};"
            f"  row /= {_c(layout.sizes[d])};\n"
            for d in reversed(out_dims))
        in_row = " + ".join(f"coord_{d} * {_c(layout.in_stride(d))}" for d in out_dims) or "0"

        indent = " " * 12
        if has_prologue(problem) or has_epilogue(problem):
            body, values = load_operand(problem, "in_offset", vec, indent)
            body += store_output(problem, "out_offset", values, indent)
        else:   # a raw copy: no conversion, every bit pattern survives
            t = anchor.dtype.c_type
            out_name, in_name = problem.program.output_name, anchor.args[0].name
            body = (f"{indent}*reinterpret_cast<Pack<{t}, kVec>*>({out_name} + out_offset) =\n"
                    f"{indent}    *reinterpret_cast<const Pack<{t}, kVec>*>({in_name} + in_offset);\n")

        device = f"""{PACK}

constexpr int kVec = {vec};        // consecutive elements per access (divides the row length)
constexpr int kThreads = {threads};
constexpr int kItems = {items};        // independent vectors per thread per step

// Output rows are contiguous runs of the (unmoved) last dim; each vector's input address is
// the permuted row base plus the same column.
__global__ void __launch_bounds__(kThreads)
{kernel}({kernel_params(problem)}) {{
    const long long inner = {_c(inner)};
    const long long vectors_per_row = inner / kVec;
    const long long vectors = {_c(numel)} / kVec;
    const long long step = (long long)gridDim.x * kThreads * kItems;
    for (long long first = (long long)blockIdx.x * kThreads * kItems + threadIdx.x; first < vectors;
         first += step) {{
        #pragma unroll
        for (int item = 0; item < kItems; ++item) {{
            const long long vector = first + item * kThreads;
            if (vector >= vectors) break;
            long long row = vector / vectors_per_row;
            const long long col = vector % vectors_per_row * kVec;
            const long long out_offset = row * inner + col;
{decompose}            const long long in_offset = {in_row} + col;
{body}        }}
    }}
}}"""
        params = launcher_params(problem)
        launcher = f"""{launcher_signature(name, params)} {{
    using namespace dice_{name};
    const long long vectors = {_c(numel)} / kVec;
    if (vectors == 0) return;
    const long long per_block = (long long)kThreads * kItems;
    // Enough blocks to cover every vector once, capped; the grid-stride loop covers the rest.
    const long long blocks = (vectors + per_block - 1) / per_block;
    const unsigned grid = (unsigned)(blocks < 1048576 ? blocks : 1048576);
    {kernel}<<<grid, kThreads, 0, stream>>>({kernel_args(problem)});
}}"""
        tokens = dict(point)
        strategy = (f"gather-copy of contiguous rows (last dim kept), {vec}-element vectors, "
                    f"{threads} threads x {items} vectors in flight{fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=tokens, device_code=device,
                       launcher_code=launcher)
        vectors = max(_value(problem, numel) // vec, 1)
        launch = Launch(kernel, (min(-(-vectors // (threads * items)), 1048576), 1, 1), (threads, 1, 1), 0)
        return RenderedKernel(self.name, tokens, source, [f"dice_{name}::{kernel}"], launcher, params,
                              [launch], f"gather-copy vec={vec}, {threads} threads x {items}")


SKETCHES: list[Sketch] = [TiledTranspose(), GatherCopy()]

SAMPLE_INTENTS: list[str] = [
    "y = x.T; x: f32[16384, 16384]",
    "y = x.T; x: f16[4096, 8192]",
    "y = x.T; x: bf16[1000, 777]",
    "y = x.T; x: f64[2048, 1024]",
    "y = x.T; x: u8[4096, 4096]",
    "y = x.T; x: f32[N, 1000]; N=777",
    "y = transpose(x, 1, 2); x: f32[16, 1024, 768]",
    "y = transpose(x, 0, 2); x: f16[64, 32, 128]",
    "y = transpose(x, 1, 2); x: bf16[8, 512, 12, 64]",
    "y = relu(x.T) * 2.0; x: f32[3000, 5000]",
    "y = x.T + b; x: f32[1024, 2048]; b: f32[2048, 1024]",
    "y = transpose(x, 0, 1); x: f32[B, 12, 512, 64]; B=8",
    "y = transpose(relu(x), 0, 1) + x; x: f32[64, 64, 128]",
]
