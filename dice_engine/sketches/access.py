"""How tensors are indexed and read by the memory-bound sketches: shapes as 64-bit C
expressions, broadcast offsets, [outer, reduced, inner] views, and 16-byte pack loads along a
contiguous run (which inputs can be read as packs, the loops that keep packs in flight).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..ir.graph import Dim, Node, Program, Shape
from .base import dim_c
from .warp import indent

def prod_c(dims: Sequence[Dim]) -> str:
    """The product of `dims` as a 64-bit C expression (literals folded)."""
    literal = 1
    symbols: list[str] = []
    for d in dims:
        if isinstance(d, int):
            literal *= d
        else:
            symbols.append(dim_c(d))
    if not symbols:
        return f"{literal}LL"
    terms = symbols + ([f"{literal}LL"] if literal != 1 else [])
    return " * ".join(terms) if len(terms) > 1 else symbols[0]

def prod_int(dims: Sequence[Dim]) -> int | None:
    """The product of `dims` when all are literals, else None."""
    out = 1
    for d in dims:
        if not isinstance(d, int):
            return None
        out *= d
    return out

def paren(c: str) -> str:
    return c if c.replace("_", "").isalnum() else f"({c})"

def broadcast_offset(in_shape: Shape, out_shape: Shape, linear: str) -> str:
    """The element offset into a contiguous input of `in_shape` that broadcasts to `out_shape`,
    for the output element at linear index `linear` (a C expression)."""
    if prod_int(in_shape) == 1:
        return "0"
    rank = len(out_shape)
    padded = (1,) * (rank - len(in_shape)) + tuple(in_shape)
    if tuple(padded) == tuple(out_shape):
        return linear
    # Runs of consecutive axes that are all kept or all broadcast share one div/mod.
    runs: list[tuple[bool, list[int]]] = []
    for axis in range(rank):
        if out_shape[axis] == 1:
            continue
        kept = padded[axis] != 1
        if runs and runs[-1][0] == kept:
            runs[-1][1].append(axis)
        else:
            runs.append((kept, [axis]))
    terms = []
    for i, (kept, axes) in enumerate(runs):
        if not kept:
            continue
        inner_axes = [a for _, later in runs[i + 1:] for a in later]
        extent = prod_c([out_shape[a] for a in axes])
        coord = paren(linear)
        if inner_axes:
            coord = f"{coord} / {paren(prod_c([out_shape[a] for a in inner_axes]))}"
        if i > 0:
            coord = f"({coord}) % {paren(extent)}"
        in_stride_axes = [a for kept2, later in runs[i + 1:] if kept2 for a in later]
        stride = prod_c([out_shape[a] for a in in_stride_axes]) if in_stride_axes else ""
        terms.append(f"{paren(coord)} * {paren(stride)}" if stride else coord)
    return " + ".join(terms)

@dataclass(frozen=True)
class AxisView:
    """A tensor seen as [outer, reduced, inner] around a contiguous run of axes."""
    outer_dims: Shape
    reduced_dims: Shape
    inner_dims: Shape

    @property
    def outer(self) -> str:
        """The outer extent as a 64-bit C expression (likewise `reduced`, `inner`)."""
        return prod_c(self.outer_dims)

    @property
    def reduced(self) -> str:
        return prod_c(self.reduced_dims)

    @property
    def inner(self) -> str:
        return prod_c(self.inner_dims)

    @property
    def outer_int(self) -> int | None:
        """The outer extent when all its dims are literals (likewise the others), else None."""
        return prod_int(self.outer_dims)

    @property
    def reduced_int(self) -> int | None:
        return prod_int(self.reduced_dims)

    @property
    def inner_int(self) -> int | None:
        return prod_int(self.inner_dims)

    @property
    def last_axis(self) -> bool:
        return self.inner_int == 1

def axis_view(shape: Shape, dims: Sequence[int]) -> AxisView | None:
    """The view of `shape` reducing `dims`, or None when they are not one contiguous run."""
    dims = sorted(dims)
    if dims and dims != list(range(dims[0], dims[-1] + 1)):
        return None
    lo, hi = (dims[0], dims[-1] + 1) if dims else (0, 0)
    return AxisView(tuple(shape[:lo]), tuple(shape[lo:hi]), tuple(shape[hi:]))

def fitting_vec(extent: int | None, vec: int) -> int:
    """A prior's pack width along an axis: `vec`, or 1 when the axis' known `extent` is not a
    multiple of it."""
    return 1 if extent is not None and extent % vec else vec

def vec_violation(axis: str, extent: int | None, vec: int) -> str | None:
    """Why packs of `vec` elements cannot tile `axis` (its extent known: not a multiple), or None."""
    if vec > 1 and extent is not None and extent % vec:
        return f"the {axis} {extent} is not a multiple of vec={vec}"
    return None

def hint_int(program: Program, dims: Sequence[Dim], hint: int = 4096) -> int:
    """The product of `dims` with unbound symbols at `hint` (for default points and launches)."""
    out = 1
    for d in program.concrete_shape(tuple(dims), hint):
        out *= d
    return out


# ---------------------------------------------------------------------------------------------
# Reading inputs as 16-byte packs of a larger (contiguous) shape

@dataclass(frozen=True)
class Access:
    """How one input is read for the elements of a pack of `full_shape` (a run of `vec`
    consecutive elements starting at a multiple of `vec`).

    kind: "full" (same shape: one pack load at the same index), "contiguous" (broadcast, but its
    innermost kept axes span a multiple of `vec` elements, so the pack's elements are
    consecutive in the input too: one pack load), "per_pack" (constant across the pack: one
    element load), "gather" (one element load per element).
    """
    node: Node
    kind: str
    offset_of: str      # C expression template of the element offset for linear index `{i}`

    @property
    def name(self) -> str:
        return self.node.name or ""

    @property
    def c_type(self) -> str:
        return self.node.dtype.c_type

    @property
    def packed(self) -> bool:
        return self.kind in ("full", "contiguous")

def plan_access(node: Node, full_shape: Shape, vec: int) -> Access:
    rank = len(full_shape)
    padded = (1,) * (rank - len(node.shape)) + tuple(node.shape)
    offset_of = broadcast_offset(node.shape, full_shape, "{i}")
    if prod_int(node.shape) == 1:
        return Access(node, "per_pack", offset_of)
    if padded == tuple(full_shape):
        return Access(node, "full", offset_of)
    # The innermost run of axes (ignoring extent-1 output axes) is either all kept or all
    # broadcast; its extent decides whether a pack stays inside it.
    axes = [a for a in range(rank) if full_shape[a] != 1]
    innermost_kept = padded[axes[-1]] != 1
    run: list[Dim] = []
    for a in reversed(axes):
        if (padded[a] != 1) != innermost_kept:
            break
        run.append(full_shape[a])
    extent = prod_int(run)
    if extent and extent % vec == 0:
        return Access(node, "contiguous" if innermost_kept else "per_pack", offset_of)
    return Access(node, "gather", offset_of)

def words_per_element(a: Access) -> float:
    """Registers (32-bit words) an element of `a` holds while in flight: packed data only, or
    for gathers the value and its 64-bit address."""
    if a.packed:
        return a.node.dtype.size / 4
    return 3.0 if a.kind == "gather" else 0.0

def pack_registers(accesses: Sequence[Access], vec: int, unroll: int) -> int:
    """Registers holding `unroll` packs of `vec` elements of `accesses` in flight (a quarter of
    a word per element at least)."""
    words = sum(words_per_element(a) for a in accesses)
    return int(unroll * vec * max(words, 0.25))

def pack_declarations(accesses: Sequence[Access], slots: str) -> list[str]:
    """Register arrays holding `slots` packs (or pack-constant elements) per input."""
    out = []
    for a in accesses:
        if a.packed:
            out.append(f"Pack<{a.c_type}, kVec> {a.name}_pack[{slots}];")
        elif a.kind == "per_pack":
            out.append(f"{a.c_type} {a.name}_first[{slots}];")
    return out

def pack_loads(accesses: Sequence[Access], pack: str, slot: str) -> list[str]:
    """Loads for the pack at linear pack index `pack` into slot `slot` of each array."""
    out = []
    for a in accesses:
        if a.kind == "full":
            out.append(f"{a.name}_pack[{slot}] = load_pack<{a.c_type}, kVec>({a.name}, {pack});")
        elif a.kind == "contiguous":
            offset = a.offset_of.format(i=f"({pack}) * kVec")
            out.append(f"{a.name}_pack[{slot}] = load_pack<{a.c_type}, kVec>({a.name}, ({offset}) / kVec);")
        elif a.kind == "per_pack":
            offset = a.offset_of.format(i=f"({pack}) * kVec")
            out.append(f"{a.name}_first[{slot}] = {a.name}[{offset}];")
    return out

def pack_step(accesses: Sequence[Access], slots: int, pack_of_slot: str, element_code: str, *,
              before_elements: str = "", after_elements: str = "") -> str:
    """One step over `slots` packs: all their loads first (so they are in flight together),
    then per pack `before_elements`, `element_code` for each element (`slot`, `elem` in scope;
    raw inputs from `pack_element(a, "slot", "elem", "pack * kVec + elem")`) and
    `after_elements`. `pack_of_slot` is the linear pack index of slot `slot`, a C expression.

    Loops around steps carry `#pragma unroll 1`: `slots` already sets the loads in flight, and
    the compiler's own unrolling on top only costs registers (spills at the budget)."""
    decl = pack_declarations(accesses, "kUnroll" if slots > 1 else "1")
    loads = pack_loads(accesses, "pack", "slot")
    pack_line = f"const long long pack = {pack_of_slot};"
    out = decl[:]
    if loads:
        out += ["#pragma unroll", f"for (int slot = 0; slot < {slots}; ++slot) {{",
                f"    {pack_line}", indent("\n".join(loads), 4), "}"]
    out += ["#pragma unroll", f"for (int slot = 0; slot < {slots}; ++slot) {{"]
    if re.search(r"\bpack\b", element_code + after_elements):
        out.append(f"    {pack_line}")
    if before_elements:
        out.append(indent(before_elements, 4))
    out += ["#pragma unroll", "    for (int elem = 0; elem < kVec; ++elem) {",
            indent(element_code, 8), "    }"]
    if after_elements:
        out.append(indent(after_elements, 4))
    out.append("}")
    return "\n".join(out)

def pack_element(a: Access, slot: str, element: str, linear: str) -> str:
    """The raw element `element` of the pack in slot `slot` (`linear`: its linear index)."""
    if a.packed:
        return f"{a.name}_pack[{slot}].v[{element}]"
    if a.kind == "per_pack":
        return f"{a.name}_first[{slot}]"
    return f"{a.name}[{a.offset_of.format(i=linear)}]"

def scalar_element(a: Access, linear: str) -> str:
    """The raw element of input `a` for the element at linear index `linear`."""
    return f"{a.name}[{a.offset_of.format(i=linear)}]"


# ---------------------------------------------------------------------------------------------
# Rows split over several blocks

SPLIT_ROW_PROLOGUE = """\
    const long long row_len = {row_len};
    const long long row = blockIdx.x / kChunks;
    const int chunk = blockIdx.x % kChunks;
    const long long row_start = row * row_len;
    // Chunk boundaries fall on whole packs, so packs never straddle two chunks.
    const long long chunk_len = ((row_len + kChunks - 1) / kChunks + kVec - 1) / kVec * kVec;
    const long long begin = chunk * chunk_len < row_len ? chunk * chunk_len : row_len;
    const long long end = begin + chunk_len < row_len ? begin + chunk_len : row_len;"""

def chunk_loops(accesses: Sequence[Access], unroll: int, element_code: str, scalar_code: str, *,
                before_elements: str = "", after_elements: str = "") -> str:
    """One thread's share (stride kThreads) of the elements [begin, end) of the row starting at
    `row_start`: 16-byte packs (`element_code` per element, `unroll` packs in flight) when
    `packed`, then the scalar remainder (`scalar_code`, with `col` the index in the row)."""
    per_pack = dict(before_elements=before_elements, after_elements=after_elements)
    step = pack_step(accesses, unroll, "next_pack + slot * kThreads", element_code, **per_pack)
    tail = pack_step(accesses, 1, "next_pack", element_code, **per_pack)
    return f"""\
long long scalar_from = begin;
if (packed) {{   // row_len % kVec == 0 and the packed pointers are 16-byte aligned
    const long long pack_end = (row_start + end) / kVec;
    long long next_pack = (row_start + begin) / kVec + threadIdx.x;
#pragma unroll 1
    for (; next_pack + (kUnroll - 1) * kThreads < pack_end; next_pack += kUnroll * kThreads) {{
{indent(step, 8)}
    }}
#pragma unroll 1
    for (; next_pack < pack_end; next_pack += kThreads) {{
{indent(tail, 8)}
    }}
    scalar_from = end;
}}
#pragma unroll 1
for (long long col = scalar_from + threadIdx.x; col < end; col += kThreads) {{
{indent(scalar_code, 4)}
}}"""
