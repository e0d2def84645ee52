"""cumsum and cumprod, four sketches. Results are deterministic (a fixed combination order, no
atomics); f16/bf16 accumulate in f32, integers in 64 bits (torch returns int64), f64 in f64.
The row sketches also scan from the end of a row: the program flip(scan(flip(x, d), d), d)
(PyTorch's reverse cumsum idiom) reads each row backwards, no flipped copy.

Along the last dim (rows):
- `scan.warp_row`: one warp per row. A lane scans `items` consecutive elements in registers,
  the warp scans the lane totals with shuffles, and a running carry crosses chunks.
- `scan.block_row`: one block per row, the same per thread plus a block scan of warp totals
  through shared memory.
- `scan.multi_block_row`: long rows split into tiles over several blocks, reduce-then-scan in
  three kernels (tile sums, a scan of the tile sums per row, the tile scans with their offset);
  the sums live in a workspace the launcher grows on demand.
- `scan.chained_row`: long rows in one pass. Blocks take tiles in row-major order from a ticket
  counter; a block scans its tile in registers (each warp a contiguous segment, coalesced), then
  waits for the previous tile of its row to publish its inclusive prefix, publishes its own and
  stores. Every tile's prefix is the previous tile's prefix combined with its own total, a fixed
  order, so results stay deterministic; the operand is read once (the multi-block scan reads it
  twice). A tile only waits on tiles that took their tickets earlier, so on blocks that are
  already running: no deadlock whatever the order blocks start in. The flags and the ticket live in
  a workspace the launcher zeroes on the stream before each launch (one launch in flight at a time,
  like the multi-block scan's workspace).
Along any other dim:
- `scan.column`: threads run along the contiguous inner dim (coalesced) and walk the scanned
  dim sequentially; optionally `split` thread rows share one column's length, combining their
  segment totals through shared memory.
Symbols (e.g. `x: f32[N, L]`) are runtime parameters.
"""
from __future__ import annotations

import math
from dataclasses import replace

from ..arch import ArchSpec
from ..ir.graph import Dim
from ..ir.ops import make
from ..ir.patterns import Problem, reversed_scan
from .base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, frame, launcher_params,
                   launcher_signature)
from .fusion import (PACK, fusion_note, fusion_unsupported, kernel_args, kernel_params, load_operand,
                    store_output, widest_bytes)

HINT = 4096    # extent assumed for unbound symbols when sizing launches for the cost model


def _c(dims: tuple[Dim, ...]) -> str:
    """The product of `dims` as a 64-bit C expression."""
    known = math.prod(d for d in dims if isinstance(d, int))
    factors = [f"(long long){d}" for d in dims if isinstance(d, str)] + [f"{known}LL"] * (known != 1)
    return " * ".join(factors) if factors else "1LL"


def _known(dims: tuple[Dim, ...]) -> int | None:
    return math.prod(dims) if all(isinstance(d, int) for d in dims) else None  # type: ignore[arg-type]


def scan_form(problem: Problem) -> tuple[Problem, bool]:
    """The problem as a forward scan of its operand, and whether rows are read from their end
    (flip(scan(flip(a)))) becomes scan(a) read backwards; the flips leave the program)."""
    scan = reversed_scan(problem.output) if problem.anchor is not None else None
    if scan is None or scan is not problem.anchor:
        return problem, False
    forward = make(scan.op, [scan.args[0].args[0]], dim=scan.attr("dim"))
    return Problem(replace(problem.program, output=forward), "scan", forward), True


def _operator(problem: Problem) -> str:
    """Device code of the scan's operator and identity (after `using Acc`)."""
    product = problem.anchor.op == "cumprod"
    name, identity, symbol = ("product", 1, "*") if product else ("sum", 0, "+")
    return (f"// The scan's operator ({name}) and its identity.\n"
            f"constexpr Acc kIdentity = Acc({identity});\n"
            f"__device__ __forceinline__ Acc combine(Acc a, Acc b) {{ return a {symbol} b; }}")


def _what(problem: Problem, reverse: bool) -> str:
    return problem.anchor.op + (" from the end" if reverse else "")


def _at(first: str, k: int, reverse: bool) -> str:
    """The row-relative position of logical element `first + k` (from the row's end when
    `reverse`)."""
    logical = f"{first} + {k}" if k else first
    return f"length - 1 - ({logical})" if reverse else logical


class ScanShape:
    """The input viewed as [outer, length, inner], scanned along `length`."""

    def __init__(self, problem: Problem):
        anchor = problem.anchor
        assert anchor is not None
        shape, dim = anchor.shape, anchor.attr("dim")
        self.problem = problem
        self.outer, self.length, self.inner = shape[:dim], shape[dim:dim + 1], shape[dim + 1:]

    @property
    def is_row_scan(self) -> bool:
        return _known(self.inner) == 1

    def value(self, dims: tuple[Dim, ...]) -> int:
        return math.prod(self.problem.program.concrete_shape(dims, HINT))


def acc_type(problem: Problem) -> str:
    """What the running sum is kept in (the anchor's dtype, halves widened to float)."""
    dtype = problem.anchor.dtype
    return {"f64": "double", "i64": "long long"}.get(dtype.name, "float")


def _acc_bytes(problem: Problem) -> int:
    return 4 if acc_type(problem) == "float" else 8


def _warp_sums_bytes(problem: Problem, threads: int) -> int:
    """Shared memory of block_exclusive_scan's warp_sums."""
    return (threads // 32 + 1) * _acc_bytes(problem)


def _unsupported(problem: Problem, rows: bool) -> str | None:
    if problem.anchor is None or problem.anchor.op not in ("cumsum", "cumprod") or problem.pattern != "scan":
        return "these sketches serve cumsum and cumprod (forward, or flipped on both sides)"
    problem, reverse = scan_form(problem)
    if reverse and not rows:
        return "a scan from the end of an inner dim is served by the general lowering"
    if ScanShape(problem).is_row_scan != rows:
        return "cumsum along the last dim uses the row sketches" if not rows else \
            "cumsum along an inner dim uses scan.column"
    return fusion_unsupported(problem)


# ---------------------------------------------------------------------------------------------
# Device code shared by the row sketches

WARP_SCAN = """\
constexpr unsigned kFullMask = 0xffffffffu;

// Inclusive scan of one value per lane across the warp (Kogge-Stone with shuffles).
__device__ __forceinline__ Acc warp_inclusive_scan(Acc value) {
    const int lane = threadIdx.x % 32;
    #pragma unroll
    for (int delta = 1; delta < 32; delta *= 2) {
        const Acc below = __shfl_up_sync(kFullMask, value, delta);
        if (lane >= delta) value = combine(below, value);
    }
    return value;
}

// The inclusive scan shifted down one lane: the lanes below combined (the identity in lane 0).
__device__ __forceinline__ Acc warp_exclusive_from_inclusive(Acc inclusive) {
    const Acc below = __shfl_up_sync(kFullMask, inclusive, 1);
    return threadIdx.x % 32 == 0 ? kIdentity : below;
}"""

BLOCK_SCAN = """\
// Exclusive scan of one value per thread across the block; `block_total` gets all combined.
// Called by every thread of the block (it holds barriers). `warp_sums` has kWarps + 1 slots.
__device__ __forceinline__ Acc block_exclusive_scan(Acc value, Acc& block_total, Acc* warp_sums) {
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    const Acc inclusive = warp_inclusive_scan(value);
    Acc exclusive = warp_exclusive_from_inclusive(inclusive);
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {   // one warp turns the warp totals into warp offsets (kWarps <= 32)
        const Acc total = lane < kWarps ? warp_sums[lane] : kIdentity;
        const Acc running = warp_inclusive_scan(total);
        const Acc offset = warp_exclusive_from_inclusive(running);
        if (lane < kWarps) warp_sums[lane] = offset;
        if (lane == kWarps - 1) warp_sums[kWarps] = running;
    }
    __syncthreads();
    exclusive = combine(warp_sums[warp], exclusive);
    block_total = warp_sums[kWarps];
    __syncthreads();   // the next call overwrites warp_sums
    return exclusive;
}"""


def _vector_ok(problem: Problem, items: int, tile_elems: int | None = None) -> bool:
    """Whether a thread's `items` elements can move as one vector: every row (and tile) starts
    items-aligned and the access fits 16 bytes."""
    length = _known(ScanShape(problem).length)
    return (length is not None and length % items == 0 and items * widest_bytes(problem) <= 16
            and (tile_elems is None or tile_elems % items == 0))


def _vector_at(first: str, reverse: bool) -> str:
    """Where a thread's vector of kItems logical elements from `first` starts: backwards, the
    physical run ending at length - first (its elements in reverse order)."""
    return f"row_base + length - ({first}) - kItems" if reverse else f"row_base + {first}"


def _load_values(problem: Problem, items: int, vector: bool, first: str, end: str, indent: str,
                 reverse: bool, name: str) -> str:
    """Code declaring `name[kItems]` and loading a thread's `items` consecutive operand elements
    at logical [first, first+items) into it (row-relative indices < `end`, base `row_base`;
    counted from the row's end when `reverse`), the identity past the end."""
    i2 = indent + "    "
    load = f"{indent}Acc {name}[kItems];\n"
    if vector:   # the row length (and tile length) are multiples of kItems: all in or all out
        code, values = load_operand(problem, _vector_at(first, reverse), items, i2)
        values = values[::-1] if reverse else values
        return (load + f"{indent}if ({first} < {end}) {{\n{code}"
                + "".join(f"{i2}{name}[{k}] = (Acc)({v});\n" for k, v in enumerate(values))
                + f"{indent}}} else {{\n"
                f"{i2}#pragma unroll\n{i2}for (int k = 0; k < kItems; ++k) {name}[k] = kIdentity;\n"
                f"{indent}}}\n")
    for k in range(items):
        code, (value,) = load_operand(problem, f"row_base + {_at(first, k, reverse)}", 1, i2)
        load += (f"{indent}if ({first} + {k} < {end}) {{\n{code}{i2}{name}[{k}] = (Acc)({value});\n"
                 f"{indent}}} else {{\n{i2}{name}[{k}] = kIdentity;\n{indent}}}\n")
    return load


def _in_thread_scan(indent: str) -> str:
    return (f"{indent}#pragma unroll\n"
            f"{indent}for (int k = 1; k < kItems; ++k)   // in-thread scan\n"
            f"{indent}    values[k] = combine(values[k - 1], values[k]);\n")


def _store_values(problem: Problem, items: int, vector: bool, first: str, end: str, indent: str,
                  reverse: bool) -> str:
    """Code storing `combine(prefix, values[k])` at the positions `_load_values` read."""
    i2 = indent + "    "
    if vector:
        results = [f"combine(prefix, values[{k}])" for k in range(items)]
        code = store_output(problem, _vector_at(first, reverse), results[::-1] if reverse else results, i2)
        return f"{indent}if ({first} < {end}) {{\n{code}{indent}}}\n"
    store = ""
    for k in range(items):
        at = f"row_base + {_at(first, k, reverse)}"
        code = store_output(problem, at, [f"combine(prefix, values[{k}])"], i2)
        store += f"{indent}if ({first} + {k} < {end}) {{\n{code}{indent}}}\n"
    return store


def _chunk_body(problem: Problem, items: int, vector: bool, first: str, end: str,
                indent: str, reverse: bool) -> tuple[str, str]:
    """Code loading a thread's `items` elements from logical `first` into `values[]` and scanning
    them in registers; and the code storing `combine(prefix, values[k])`."""
    load = _load_values(problem, items, vector, first, end, indent, reverse, "values")
    return (load + _in_thread_scan(indent),
            _store_values(problem, items, vector, first, end, indent, reverse))


def _rows_length(shape: ScanShape) -> str:
    return (f"    const long long rows = {_c(shape.outer)};\n"
            f"    const long long length = {_c(shape.length)};\n")


def _launch_name(name: str, kernel: str) -> str:
    return f"dice_{name}::{kernel}"


def _kept_workspace(size: str) -> str:
    """Launcher code giving `char* workspace` at least `size` bytes: grown on demand, kept across
    calls (returns without launching when the allocation fails)."""
    return f"""    static char* workspace = nullptr;
    static size_t capacity = 0;
    const size_t needed = {size};
    if (needed > capacity) {{
        if (workspace != nullptr) cudaFree(workspace);
        if (cudaMalloc(&workspace, needed) != cudaSuccess) {{
            workspace = nullptr;
            capacity = 0;
            return;
        }}
        capacity = needed;
    }}
"""


class _LongRowScan(Sketch):
    """A row scan for rows too long for one block's single chunk (`MIN_LENGTH` and up)."""
    pattern = "scan"
    MIN_LENGTH = 0
    SHORT = ""      # why shorter rows go elsewhere

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        if why := _unsupported(problem, rows=True):
            return why
        length = _known(ScanShape(problem).length)
        if length is not None and length < self.MIN_LENGTH:
            return f"rows of {length} elements {self.SHORT} ({self.name} starts at {self.MIN_LENGTH})"
        return None


# ---------------------------------------------------------------------------------------------
# scan.warp_row

class WarpRowScan(Sketch):
    name = "scan.warp_row"
    pattern = "scan"

    MAX_LENGTH = 16384   # longer rows leave one warp doing a block's (or a grid's) work

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        if why := _unsupported(problem, rows=True):
            return why
        length = _known(ScanShape(problem).length)
        if length is not None and length > self.MAX_LENGTH:
            return f"rows of {length} elements are too long for one warp (at most {self.MAX_LENGTH})"
        return None

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        return DesignSpace(
            [Token("items", (1, 2, 4, 8), "consecutive elements per lane per chunk (chunk = 32 x items)",
                   (Role.WORK,)),
             Token("warps", (2, 4, 8), "warps (rows) per block", (Role.THREADS,))])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        problem = scan_form(problem)[0]
        length = ScanShape(problem).value(ScanShape(problem).length)
        items = max(1, min(16 // widest_bytes(problem), -(-length // 32)))
        items = 1 << (items.bit_length() - 1)        # the power of two at or below
        for candidate in (items, 4, 2, 1):
            if _vector_ok(problem, candidate) or candidate == 1:
                return {"items": min(candidate, 8), "warps": 4}
        raise AssertionError("unreachable")

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        problem, reverse = scan_form(problem)
        shape = ScanShape(problem)
        items, warps = point["items"], point["warps"]
        vector = _vector_ok(problem, items)
        kernel = f"{name}_kernel"
        load, store = _chunk_body(problem, items, vector, "first", "length", " " * 8, reverse)
        device = f"""{PACK if vector else ""}

using Acc = {acc_type(problem)};
{_operator(problem)}
constexpr int kItems = {items};   // consecutive elements per lane per chunk
constexpr int kWarps = {warps};   // rows per block, one per warp

{WARP_SCAN}

__global__ void __launch_bounds__(kWarps * 32)
{kernel}({kernel_params(problem)}) {{
{_rows_length(shape)}    const long long row = (long long)blockIdx.x * kWarps + threadIdx.x / 32;
    if (row >= rows) return;   // the whole warp leaves together; no block barriers below
    const int lane = threadIdx.x % 32;
    const long long row_base = row * length;

    Acc carry = kIdentity;   // the row's earlier chunks combined
    for (long long chunk = 0; chunk < length; chunk += 32 * kItems) {{
        const long long first = chunk + lane * kItems;
{load}        const Acc inclusive = warp_inclusive_scan(values[kItems - 1]);
        const Acc prefix = combine(carry, warp_exclusive_from_inclusive(inclusive));
{store}        carry = combine(carry, __shfl_sync(kFullMask, inclusive, 31));
    }}
}}"""
        params = launcher_params(problem)
        launcher = f"""{launcher_signature(name, params)} {{
    using namespace dice_{name};
    const long long rows = {_c(shape.outer)};
    if (rows == 0) return;
    {kernel}<<<(unsigned)((rows + kWarps - 1) / kWarps), kWarps * 32, 0, stream>>>({kernel_args(problem)});
}}"""
        access = "vector" if vector else "scalar"
        strategy = (f"{_what(problem, reverse)} along rows, one warp per row, {items} consecutive elements "
                    f"per lane ({access} access), shuffle scan of lane totals, carry across chunks"
                    f"{fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        rows = shape.value(shape.outer)
        launch = Launch(kernel, (max(1, -(-rows // warps)), 1, 1), (warps * 32, 1, 1), 0)
        return RenderedKernel(self.name, dict(point), source, [_launch_name(name, kernel)], launcher, params,
                              [launch], f"warp per row, items={items}, {warps} warps")


# ---------------------------------------------------------------------------------------------
# scan.block_row and scan.multi_block_row

def _block_space(problem: Problem, arch: ArchSpec, extra: list[Token]) -> DesignSpace:
    def threads_fit(p: Point) -> str | None:
        ok = p["threads"] <= min(arch.max_threads_per_block, 1024)
        return None if ok else f"{p['threads']} threads exceed the block limit"
    return DesignSpace(
        [Token("threads", (128, 256, 512, 1024), "threads per block", (Role.THREADS,)),
         Token("items", (1, 2, 4, 8), "consecutive elements per thread per chunk", (Role.WORK,)),
         *extra], [threads_fit])


def _block_default(problem: Problem, length: int) -> Point:
    items = 1 << (max(1, 16 // widest_bytes(problem)).bit_length() - 1)
    while items > 1 and not _vector_ok(problem, items):
        items //= 2
    threads = 128 if length <= 1024 else (256 if length <= 8192 else 512)
    return {"threads": threads, "items": min(items, 8)}


def _tile_kernel(problem: Problem, kernel: str, items: int, vector: bool, reverse: bool) -> str:
    """Scans tiles of rows: block b covers tile b % tiles_per_row of row b / tiles_per_row,
    starting from `tile_offsets[b]` (or 0 when null)."""
    i1 = " " * 4
    first_load = _load_values(problem, items, vector, "first0", "end", i1, reverse, "values")
    next_load = _load_values(problem, items, vector, "first + kThreads * kItems", "end", i1 * 2, reverse,
                             "upcoming")
    store = _store_values(problem, items, vector, "first", "end", i1 * 2, reverse)
    shape = ScanShape(problem)
    return f"""__global__ void __launch_bounds__(kThreads)
{kernel}({kernel_params(problem)}, long long tile_len, const Acc* __restrict__ tile_offsets) {{
    __shared__ Acc warp_sums[kWarps + 1];
    const long long length = {_c(shape.length)};
    const long long tiles_per_row = (length + tile_len - 1) / tile_len;
    const long long row = blockIdx.x / tiles_per_row;
    const long long begin = blockIdx.x % tiles_per_row * tile_len;   // row-relative
    const long long end = begin + tile_len < length ? begin + tile_len : length;
    const long long row_base = row * length;

    // Every thread runs every chunk (the loop bounds are block-uniform), so the barriers in
    // block_exclusive_scan are reached by all. The next chunk's loads are issued before this
    // chunk's block scan, so a block keeps its reads in flight across the scan's barriers.
    Acc carry = tile_offsets != nullptr ? tile_offsets[blockIdx.x] : kIdentity;
    const long long first0 = begin + threadIdx.x * kItems;
{first_load}    for (long long chunk = begin; chunk < end; chunk += kThreads * kItems) {{
        const long long first = chunk + threadIdx.x * kItems;
{next_load}{_in_thread_scan(i1 * 2)}        Acc chunk_total;
        const Acc prefix = combine(carry, block_exclusive_scan(values[kItems - 1], chunk_total, warp_sums));
{store}        carry = combine(carry, chunk_total);
        #pragma unroll
        for (int k = 0; k < kItems; ++k) values[k] = upcoming[k];
    }}
}}"""


def _block_prelude(problem: Problem, threads: int, items: int, vector: bool) -> str:
    return f"""{PACK if vector else ""}

using Acc = {acc_type(problem)};
{_operator(problem)}
constexpr int kThreads = {threads};
constexpr int kWarps = kThreads / 32;
constexpr int kItems = {items};   // consecutive elements per thread per chunk

{WARP_SCAN}

{BLOCK_SCAN}"""


class BlockRowScan(Sketch):
    name = "scan.block_row"
    pattern = "scan"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return _unsupported(problem, rows=True)

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        return _block_space(problem, arch, [])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        problem = scan_form(problem)[0]
        shape = ScanShape(problem)
        return _block_default(problem, shape.value(shape.length))

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        problem, reverse = scan_form(problem)
        shape = ScanShape(problem)
        threads, items = point["threads"], point["items"]
        vector = _vector_ok(problem, items)
        kernel = f"{name}_kernel"
        device = (_block_prelude(problem, threads, items, vector) + "\n\n"
                  + _tile_kernel(problem, kernel, items, vector, reverse))
        params = launcher_params(problem)
        launcher = f"""{launcher_signature(name, params)} {{
    using namespace dice_{name};
{_rows_length(shape)}    if (rows == 0 || length == 0) return;
    // One tile per row: the whole row, no tile offsets.
    {kernel}<<<(unsigned)rows, kThreads, 0, stream>>>({kernel_args(problem)}, length, nullptr);
}}"""
        access = "vector" if vector else "scalar"
        strategy = (f"{_what(problem, reverse)} along rows, one block of {threads} threads per row, "
                    f"{items} consecutive elements per thread ({access} access), warp shuffles + "
                    f"shared-memory block scan, carry across chunks{fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        launch = Launch(kernel, (max(1, shape.value(shape.outer)), 1, 1), (threads, 1, 1),
                        _warp_sums_bytes(problem, threads))
        return RenderedKernel(self.name, dict(point), source, [_launch_name(name, kernel)], launcher, params,
                              [launch], f"block per row, {threads} threads x {items}")


class MultiBlockRowScan(_LongRowScan):
    name = "scan.multi_block_row"
    MIN_LENGTH = 8192
    SHORT = "fit one block; splitting them only adds passes"

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        tile_chunks = Token("tile_chunks", (2, 4, 8, 16),
                            "chunks (threads x items) per tile; one block per tile", (Role.TILE,))
        return _block_space(problem, arch, [tile_chunks])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        point = _block_default(scan_form(problem)[0], 1 << 20)
        return {**point, "tile_chunks": 4}

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        problem, reverse = scan_form(problem)
        shape = ScanShape(problem)
        threads, items, tile_chunks = point["threads"], point["items"], point["tile_chunks"]
        tile_len = threads * items * tile_chunks
        vector = _vector_ok(problem, items, tile_len)
        sums_kernel, offsets_kernel, scan_kernel = (f"{name}_tile_sums_kernel", f"{name}_tile_offsets_kernel",
                                                    f"{name}_kernel")
        i1, i2 = " " * 8, " " * 12
        sum_code = ""
        for k in range(items):   # scalar reads here: this pass only needs totals
            code, (value,) = load_operand(problem, f"row_base + {_at('first', k, reverse)}", 1, i2)
            sum_code += (f"{i1}if (first + {k} < end) {{\n{code}"
                         f"{i2}partial = combine(partial, (Acc)({value}));\n{i1}}}\n")
        device = f"""{_block_prelude(problem, threads, items, vector)}

constexpr long long kTileLen = {tile_len};   // elements per tile (kThreads * kItems * {tile_chunks})

// Pass 1: the sum of every tile (block b: tile b % tiles_per_row of row b / tiles_per_row).
__global__ void __launch_bounds__(kThreads)
{sums_kernel}({kernel_params(problem)}, Acc* __restrict__ tile_sums) {{
    __shared__ Acc warp_sums[kWarps + 1];
    const long long length = {_c(shape.length)};
    const long long tiles_per_row = (length + kTileLen - 1) / kTileLen;
    const long long row = blockIdx.x / tiles_per_row;
    const long long begin = blockIdx.x % tiles_per_row * kTileLen;
    const long long end = begin + kTileLen < length ? begin + kTileLen : length;
    const long long row_base = row * length;
    Acc partial = kIdentity;
    for (long long chunk = begin; chunk < end; chunk += kThreads * kItems) {{
        const long long first = chunk + threadIdx.x * kItems;
{sum_code}    }}
    // A block scan also yields the block total; one code path, deterministic order.
    Acc tile_total;
    block_exclusive_scan(partial, tile_total, warp_sums);
    if (threadIdx.x == 0) tile_sums[blockIdx.x] = tile_total;
}}

// Pass 2: per row, tile sums -> exclusive tile offsets, in place (one block per row).
__global__ void __launch_bounds__(kThreads)
{offsets_kernel}(Acc* __restrict__ tile_sums, long long tiles_per_row) {{
    __shared__ Acc warp_sums[kWarps + 1];
    Acc* row_sums = tile_sums + (long long)blockIdx.x * tiles_per_row;
    Acc carry = kIdentity;
    for (long long first = 0; first < tiles_per_row; first += kThreads) {{   // block-uniform bounds
        const long long t = first + threadIdx.x;
        const Acc sum = t < tiles_per_row ? row_sums[t] : kIdentity;
        Acc chunk_total;
        const Acc offset = combine(carry, block_exclusive_scan(sum, chunk_total, warp_sums));
        if (t < tiles_per_row) row_sums[t] = offset;
        carry = combine(carry, chunk_total);
    }}
}}

// Pass 3: scan every tile starting from its offset.
{_tile_kernel(problem, scan_kernel, items, vector, reverse)}"""
        params = launcher_params(problem)
        launcher = f"""{launcher_signature(name, params)} {{
    using namespace dice_{name};
{_rows_length(shape)}    if (rows == 0 || length == 0) return;
    const long long tiles_per_row = (length + kTileLen - 1) / kTileLen;
    const long long tiles = rows * tiles_per_row;
    // Workspace for the tile sums.
{_kept_workspace("tiles * sizeof(Acc)")}    Acc* tile_sums = (Acc*)workspace;
    {sums_kernel}<<<(unsigned)tiles, kThreads, 0, stream>>>({kernel_args(problem)}, tile_sums);
    {offsets_kernel}<<<(unsigned)rows, kThreads, 0, stream>>>(tile_sums, tiles_per_row);
    {scan_kernel}<<<(unsigned)tiles, kThreads, 0, stream>>>({kernel_args(problem)}, kTileLen, tile_sums);
}}"""
        access = "vector" if vector else "scalar"
        strategy = (f"{_what(problem, reverse)} along long rows, reduce-then-scan over tiles of {tile_len} "
                    f"elements (tile sums, per-row offsets, tile scans; deterministic), {threads} threads x "
                    f"{items} elements ({access} access){fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        rows, length = shape.value(shape.outer), shape.value(shape.length)
        tiles = max(1, rows * -(-length // tile_len))
        smem = _warp_sums_bytes(problem, threads)
        launches = [Launch(sums_kernel, (tiles, 1, 1), (threads, 1, 1), smem),
                    Launch(offsets_kernel, (max(rows, 1), 1, 1), (threads, 1, 1), smem),
                    Launch(scan_kernel, (tiles, 1, 1), (threads, 1, 1), smem)]
        names = [_launch_name(name, k) for k in (sums_kernel, offsets_kernel, scan_kernel)]
        # the operand is read twice (tile sums, then the tile scans) and the output written once
        moved = rows * length * (2 * widest_bytes(problem) + problem.output.dtype.size)
        return RenderedKernel(self.name, dict(point), source, names, launcher, params, launches,
                              f"multi-block reduce-then-scan, tile {tile_len}, {threads} threads x {items}",
                              dram_bytes=moved)


# ---------------------------------------------------------------------------------------------
# scan.chained_row

class ChainedRowScan(_LongRowScan):
    name = "scan.chained_row"
    MIN_LENGTH = 4096
    SHORT = "are one tile: the warp and block sketches serve them"

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        def threads_fit(p: Point) -> str | None:
            ok = p["threads"] <= min(arch.max_threads_per_block, 1024)
            return None if ok else f"{p['threads']} threads exceed the block limit"

        def registers_fit(p: Point) -> str | None:
            held = p["items"] * p["chunks"] * _acc_bytes(problem) // 4
            return None if held <= 64 else f"{held} registers of scanned values per thread (at most 64)"
        return DesignSpace(
            [Token("threads", (128, 256, 512, 1024), "threads per block (one tile each)", (Role.THREADS,)),
             Token("items", (1, 2, 4, 8), "consecutive elements per lane per chunk (one vector access)",
                   (Role.WORK,)),
             Token("chunks", (1, 2, 4, 8, 16), "chunks of 32 x items a warp holds in registers",
                   (Role.TILE,))],
            [threads_fit, registers_fit])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        problem = scan_form(problem)[0]
        items = 1 << (max(1, 16 // widest_bytes(problem)).bit_length() - 1)
        while items > 1 and not _vector_ok(problem, items):
            items //= 2
        # 16 KB of operand per 256-thread tile: a few tiles per row keep the chains short, and two
        # or more blocks per SM keep enough loads in flight to stream at DRAM rate.
        chunks = max(1, min(16, 4096 // (256 * items)))
        return {"threads": 256, "items": min(items, 8), "chunks": chunks}

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        problem, reverse = scan_form(problem)
        shape = ScanShape(problem)
        threads, items, chunks = point["threads"], point["items"], point["chunks"]
        tile_len = threads * items * chunks
        vector = _vector_ok(problem, items, tile_len)
        kernel = f"{name}_kernel"
        i2 = " " * 8
        load = _load_values(problem, items, vector, "first", "end", i2, reverse, "values")
        store = _store_values(problem, items, vector, "first", "end", i2, reverse)
        device = f"""{PACK if vector else ""}

using Acc = {acc_type(problem)};
{_operator(problem)}
constexpr int kThreads = {threads};
constexpr int kWarps = kThreads / 32;
constexpr int kItems = {items};    // consecutive elements per lane per chunk
constexpr int kChunks = {chunks};   // chunks of 32 x kItems per warp, held in registers
constexpr long long kWarpSpan = 32LL * kItems * kChunks;
constexpr long long kTileLen = kWarps * kWarpSpan;

{WARP_SCAN}

// Tile t of a row publishes its inclusive prefix (value first, then, after a fence, its flag);
// tile t + 1 waits for the flag. Volatile accesses: the flags change under a spinning thread.
__device__ __forceinline__ Acc wait_for_prefix(const unsigned* flags, const Acc* prefixes, long long tile) {{
    while (*(const volatile unsigned*)&flags[tile] == 0u) __nanosleep(64);
    __threadfence();
    return *(const volatile Acc*)&prefixes[tile];
}}

__device__ __forceinline__ void publish_prefix(unsigned* flags, Acc* prefixes, long long tile, Acc value) {{
    *(volatile Acc*)&prefixes[tile] = value;
    __threadfence();
    *(volatile unsigned*)&flags[tile] = 1u;
}}

__global__ void __launch_bounds__(kThreads)
{kernel}({kernel_params(problem)}, unsigned* __restrict__ flags, Acc* __restrict__ prefixes,
        unsigned* __restrict__ ticket) {{
    __shared__ unsigned tile_slot;
    __shared__ Acc warp_offsets[kWarps];
    __shared__ Acc tile_total;
    __shared__ Acc tile_before;
    const long long length = {_c(shape.length)};
    const long long tiles_per_row = (length + kTileLen - 1) / kTileLen;
    // Tiles in the order blocks start, so the tile this one waits for is already running.
    if (threadIdx.x == 0) tile_slot = atomicAdd(ticket, 1u);
    __syncthreads();
    const long long tile = tile_slot;
    const long long row = tile / tiles_per_row;
    const long long begin = tile % tiles_per_row * kTileLen;   // row-relative
    const long long end = begin + kTileLen < length ? begin + kTileLen : length;
    const long long row_base = row * length;
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    const long long segment = begin + warp * kWarpSpan;

    // Each warp scans its contiguous segment chunk by chunk: a chunk's 32 x kItems elements
    // are one coalesced access per lane, scanned in the lane, then across the warp.
    Acc held[kChunks][kItems];
    Acc lane_prefix[kChunks];
    Acc carry = kIdentity;   // the segment's earlier chunks combined
    #pragma unroll
    for (int j = 0; j < kChunks; ++j) {{
        const long long first = segment + (j * 32LL + lane) * kItems;
{load}{_in_thread_scan(i2)}        #pragma unroll
        for (int k = 0; k < kItems; ++k) held[j][k] = values[k];
    }}
    #pragma unroll
    for (int j = 0; j < kChunks; ++j) {{   // the loads above are all in flight before this waits
        const Acc inclusive = warp_inclusive_scan(held[j][kItems - 1]);
        lane_prefix[j] = combine(carry, warp_exclusive_from_inclusive(inclusive));
        carry = combine(carry, __shfl_sync(kFullMask, inclusive, 31));
    }}
    if (lane == 0) warp_offsets[warp] = carry;
    __syncthreads();
    if (warp == 0) {{   // warp totals -> warp offsets within the tile (kWarps <= 32)
        const Acc total = lane < kWarps ? warp_offsets[lane] : kIdentity;
        const Acc running = warp_inclusive_scan(total);
        const Acc offset = warp_exclusive_from_inclusive(running);
        if (lane < kWarps) warp_offsets[lane] = offset;
        if (lane == kWarps - 1) tile_total = running;
    }}
    __syncthreads();
    if (threadIdx.x == 0) {{   // the chain: the row's previous tile, then this one's prefix for the next
        const Acc before = begin == 0 ? kIdentity : wait_for_prefix(flags, prefixes, tile - 1);
        if (end < length) publish_prefix(flags, prefixes, tile, combine(before, tile_total));
        tile_before = before;
    }}
    __syncthreads();
    const Acc offset = combine(tile_before, warp_offsets[warp]);
    #pragma unroll
    for (int j = 0; j < kChunks; ++j) {{
        const long long first = segment + (j * 32LL + lane) * kItems;
        const Acc prefix = combine(offset, lane_prefix[j]);
        Acc values[kItems];
        #pragma unroll
        for (int k = 0; k < kItems; ++k) values[k] = held[j][k];
{store}    }}
}}"""
        params = launcher_params(problem)
        workspace = _kept_workspace("tiles * (sizeof(Acc) + sizeof(unsigned)) + sizeof(unsigned)")
        launcher = f"""{launcher_signature(name, params)} {{
    using namespace dice_{name};
{_rows_length(shape)}    if (rows == 0 || length == 0) return;
    const long long tiles = rows * ((length + kTileLen - 1) / kTileLen);
    // Workspace: per-tile prefixes, then per-tile flags and the ticket (zeroed per launch).
{workspace}    Acc* prefixes = (Acc*)workspace;
    unsigned* flags = (unsigned*)(workspace + tiles * sizeof(Acc));
    if (cudaMemsetAsync(flags, 0, (tiles + 1) * sizeof(unsigned), stream) != cudaSuccess) return;
    unsigned* ticket = flags + tiles;
    {kernel}<<<(unsigned)tiles, kThreads, 0, stream>>>({kernel_args(problem)}, flags, prefixes, ticket);
}}"""
        access = "vector" if vector else "scalar"
        strategy = (f"{_what(problem, reverse)} along long rows in one pass: tiles of {tile_len} elements "
                    f"scanned in registers ({threads} threads, {chunks} chunks of 32 x {items} per warp, "
                    f"{access} access), each tile's prefix chained from the row's previous tile "
                    f"(deterministic){fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        rows, length = shape.value(shape.outer), shape.value(shape.length)
        tiles = max(1, rows * -(-length // tile_len))
        smem = (threads // 32 + 2) * _acc_bytes(problem) + 4
        launch = Launch(kernel, (tiles, 1, 1), (threads, 1, 1), smem)
        return RenderedKernel(self.name, dict(point), source, [_launch_name(name, kernel)], launcher, params,
                              [launch], f"chained one-pass row scan, tile {tile_len}, {threads} threads x "
                                        f"{items} x {chunks}", chains=max(1, rows))


# ---------------------------------------------------------------------------------------------
# scan.column

class ColumnScan(Sketch):
    name = "scan.column"
    pattern = "scan"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return _unsupported(problem, rows=False)

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        def threads_fit(p: Point) -> str | None:
            threads = p["threads_x"] * p["split"]
            ok = threads <= arch.max_threads_per_block
            return None if ok else f"{threads} threads exceed the block limit"
        return DesignSpace(
            [Token("threads_x", (32, 64, 128, 256), "threads along the contiguous inner dim",
                   (Role.THREADS,)),
             Token("split", (1, 2, 4, 8, 16), "thread rows sharing one column's length (segments)",
                   (Role.SPLIT,))],
            [threads_fit])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        shape = ScanShape(problem)
        inner, columns = shape.value(shape.inner), shape.value(shape.outer + shape.inner)
        threads_x = 32 if inner <= 32 else (64 if inner <= 64 else 128)
        # Split the scanned dim when there are too few columns to fill the GPU with threads.
        split = 1
        while (split < 16 and columns * split < arch.sms * 1024 and shape.value(shape.length) >= 64 * split
               and threads_x * split * 2 <= arch.max_threads_per_block):
            split *= 2
        return {"threads_x": threads_x, "split": split}

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        shape = ScanShape(problem)
        threads_x, split = point["threads_x"], point["split"]
        kernel = f"{name}_kernel"
        i3 = " " * 12
        code, (value,) = load_operand(problem, "offset", 1, i3)
        store = store_output(problem, "offset", ["running"], i3)
        if split > 1:
            first_pass = f"""
        // Pass 1: each thread row sums its segment; the rows above a segment give its start.
        Acc segment_total = kIdentity;
        if (active) {{
            for (long long l = seg_begin; l < seg_end; ++l) {{
                const long long offset = base + l * inner;
{code}{i3}segment_total = combine(segment_total, (Acc)({value}));
            }}
        }}
        segment_totals[threadIdx.y][threadIdx.x] = segment_total;
        __syncthreads();
        Acc running = kIdentity;
        for (int s = 0; s < (int)threadIdx.y; ++s) running = combine(running, segment_totals[s][threadIdx.x]);
        __syncthreads();   // segment_totals is rewritten for the next column
"""
            smem = "    __shared__ Acc segment_totals[kSplit][kThreadsX];\n"
        else:
            first_pass = "        Acc running = kIdentity;\n"
            smem = ""
        device = f"""using Acc = {acc_type(problem)};
{_operator(problem)}
constexpr int kThreadsX = {threads_x};   // threads along the inner (contiguous) dim
constexpr int kSplit = {split};       // thread rows splitting the scanned dim

// Block (x, y): inner columns [x * kThreadsX, +kThreadsX) of outer slices y, y + gridDim.y, ...
__global__ void __launch_bounds__(kThreadsX * kSplit)
{kernel}({kernel_params(problem)}) {{
{smem}    const long long outer = {_c(shape.outer)};
    const long long length = {_c(shape.length)};
    const long long inner = {_c(shape.inner)};
    const long long col = (long long)blockIdx.x * kThreadsX + threadIdx.x;
    const bool active = col < inner;   // inactive threads stay for the barriers
    const long long segment = (length + kSplit - 1) / kSplit;
    const long long seg_begin = threadIdx.y * segment < length ? threadIdx.y * segment : length;
    const long long seg_end = seg_begin + segment < length ? seg_begin + segment : length;
    for (long long slice = blockIdx.y; slice < outer; slice += gridDim.y) {{   // block-uniform
        const long long base = slice * length * inner + col;
{first_pass}        if (active) {{
            #pragma unroll 4
            for (long long l = seg_begin; l < seg_end; ++l) {{
                const long long offset = base + l * inner;
{code}{i3}running = combine(running, (Acc)({value}));
{store}            }}
        }}
    }}
}}"""
        params = launcher_params(problem)
        launcher = f"""{launcher_signature(name, params)} {{
    using namespace dice_{name};
    const long long outer = {_c(shape.outer)};
    const long long inner = {_c(shape.inner)};
    if (outer == 0 || inner == 0) return;
    const long long slices = outer < 65535 ? outer : 65535;   // the kernel loops over the rest
    const dim3 grid((unsigned)((inner + kThreadsX - 1) / kThreadsX), (unsigned)slices);
    {kernel}<<<grid, dim3(kThreadsX, kSplit), 0, stream>>>({kernel_args(problem)});
}}"""
        how = (f"{split} thread rows per column (segment totals combined in shared memory, then "
               f"re-scanned)" if split > 1 else "one thread per column walking the scanned dim")
        strategy = (f"{_what(problem, False)} along an inner dim, {threads_x} threads across the contiguous "
                    f"inner dim (coalesced), {how}{fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        grid = (max(1, -(-shape.value(shape.inner) // threads_x)),
                max(1, min(shape.value(shape.outer), 65535)), 1)
        smem = split * threads_x * _acc_bytes(problem) if split > 1 else 0
        launch = Launch(kernel, grid, (threads_x, split, 1), smem)
        return RenderedKernel(self.name, dict(point), source, [_launch_name(name, kernel)], launcher, params,
                              [launch], f"column scan, {threads_x} x {split}")


SKETCHES: list[Sketch] = [WarpRowScan(), BlockRowScan(), MultiBlockRowScan(), ChainedRowScan(), ColumnScan()]

SAMPLE_INTENTS: list[str] = [
    "y = cumsum(x, dim=1); x: f32[4096, 1024]",
    "y = cumsum(x, dim=1); x: f32[N, 1000]; N=777",
    "y = cumsum(x, dim=-1); x: f16[512, 4096]",
    "y = cumsum(x, dim=1); x: bf16[64, 100003]",
    "y = cumsum(x, dim=0); x: f32[16777216]",
    "y = cumsum(x, dim=1); x: f64[128, 2048]",
    "y = cumsum(x, dim=1); x: i32[1024, 333]",
    "y = cumsum(x, dim=0); x: f32[4096, 1024]",
    "y = cumsum(x, dim=1); x: f16[32, 5000, 64]",
    "y = cumsum(x, dim=0); x: i64[100000, 3]",
    "y = relu(cumsum(x * 2.0, dim=1)); x: f32[2048, 2048]",
    "y = cumsum(x, dim=1); x: f32[B, L]; B=3; L=1000000",
    "y = flip(cumsum(flip(x, dims=[1]), dim=1), dims=[1]); x: f32[2048, 32768]",
]
