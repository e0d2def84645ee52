"""Shared building blocks of the memory-bound sketches (elementwise, reduction, softmax, norm).

CUDA helpers come back as text that the caller puts inside its region's `namespace dice_<name>`
(through `base.frame`), so two generated regions in one translation unit never collide:
`PACK_HELPERS` (16-byte aligned packs), `SHUFFLE_HELPERS` (word-wise shuffles of any value and
a deterministic reduction over the threads sharing a row). Python helpers say how an input
broadcast into a larger shape is indexed, how a tensor is viewed as [outer, reduced, inner],
how each reduction combines partial results, and how expressions become scalar code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..arch import ArchSpec
from ..ir.dtypes import DType
from ..ir.graph import Dim, Node, Program, Shape
from ..ir.patterns import Problem
from .base import Param, Point, dim_c, load_as_compute, store_from_compute
from .expr import Emitted, emit

PACK_BYTES = 16   # one 128-bit load or store per thread: the widest global access

PACK_HELPERS = """\
// N consecutive elements moved as one aligned access (16 bytes: a single 128-bit load/store).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
    T v[N];
};

template <typename T, int N>
__device__ __forceinline__ Pack<T, N> load_pack(const T* __restrict__ base, long long pack_index) {
    return reinterpret_cast<const Pack<T, N>*>(base)[pack_index];
}

template <typename T, int N>
__device__ __forceinline__ void store_pack(T* __restrict__ base, long long pack_index,
                                           const Pack<T, N>& pack) {
    reinterpret_cast<Pack<T, N>*>(base)[pack_index] = pack;
}"""

SHUFFLE_HELPERS = """\
// Warp shuffles of any value made of 32-bit words (floats, doubles, 64-bit ints, small structs).
// Every lane of the warp must call them: the mask is the full warp.
template <typename T>
__device__ __forceinline__ T shfl_down(T value, int offset, int width) {
    static_assert(sizeof(T) % 4 == 0, "shuffled values are made of 32-bit words");
    int words[sizeof(T) / 4];
    memcpy(words, &value, sizeof(T));
#pragma unroll
    for (int w = 0; w < int(sizeof(T) / 4); ++w)
        words[w] = __shfl_down_sync(0xffffffffu, words[w], offset, width);
    memcpy(&value, words, sizeof(T));
    return value;
}

template <typename T>
__device__ __forceinline__ T shfl_idx(T value, int src_lane, int width) {
    static_assert(sizeof(T) % 4 == 0, "shuffled values are made of 32-bit words");
    int words[sizeof(T) / 4];
    memcpy(words, &value, sizeof(T));
#pragma unroll
    for (int w = 0; w < int(sizeof(T) / 4); ++w)
        words[w] = __shfl_sync(0xffffffffu, words[w], src_lane, width);
    memcpy(&value, words, sizeof(T));
    return value;
}

// Combines `value` over the G consecutive threads (G a power of two) that share one row and
// gives every one of them the result. Deterministic and identical in every lane: a fixed tree
// to the group's first lane, a broadcast, then a fixed order over the group's warps. All
// threads of the block must call it together (full-mask shuffles; barriers when G > 32).
// `warp_partials` is shared memory with one slot per warp of the block.
template <int G, typename T, typename Op>
__device__ __forceinline__ T group_reduce(T value, Op op, T* warp_partials) {
    constexpr int kWidth = G < 32 ? G : 32;
#pragma unroll
    for (int offset = kWidth / 2; offset > 0; offset /= 2)
        value = op(value, shfl_down(value, offset, kWidth));
    value = shfl_idx(value, 0, kWidth);
    if constexpr (G > 32) {
        constexpr int kWarpsPerGroup = G / 32;
        const int warp = threadIdx.x / 32;
        const int first_warp = warp / kWarpsPerGroup * kWarpsPerGroup;
        __syncthreads();   // the previous call's readers are done with warp_partials
        if (threadIdx.x % 32 == 0) warp_partials[warp] = value;
        __syncthreads();
        value = warp_partials[first_warp];
#pragma unroll
        for (int w = 1; w < kWarpsPerGroup; ++w) value = op(value, warp_partials[first_warp + w]);
    }
    return value;
}"""


def pack_width(dtypes: Sequence[DType]) -> int:
    """Elements per 16-byte pack for the widest of `dtypes` (narrower tensors move fewer bytes)."""
    return PACK_BYTES // max(d.size for d in dtypes)


def pow2_range(lo: int, hi: int) -> tuple[int, ...]:
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return tuple(out)


def resident_blocks(arch: ArchSpec, threads: int) -> int:
    """Blocks of `threads` one SM holds at most by the thread and block limits."""
    return max(1, min(arch.max_threads_per_sm // threads, arch.max_blocks_per_sm))


def min_blocks_per_sm(arch: ArchSpec, threads: int) -> int:
    """The `__launch_bounds__` minimum: half the thread-limited residency. It lets ptxas use up
    to twice the full-occupancy register budget (keeping >= 50% occupancy) instead of spilling
    to reach full occupancy."""
    return max(1, resident_blocks(arch, threads) // 2)


def register_budget(arch: ArchSpec, threads: int) -> int:
    """Registers per thread ptxas may use under `min_blocks_per_sm`."""
    per_block = arch.regs_per_sm // min_blocks_per_sm(arch, threads)
    return min(arch.max_regs_per_thread, per_block // threads, arch.max_regs_per_block // threads)


def wave_grid_cap(arch: ArchSpec, threads: int, waves: int) -> int:
    """A grid of `waves` full waves of resident blocks over all SMs (for grid-stride loops)."""
    return arch.sms * resident_blocks(arch, threads) * waves


# ---------------------------------------------------------------------------------------------
# Shapes as C expressions

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


def hint_int(program: Program, dims: Sequence[Dim], hint: int = 4096) -> int:
    """The product of `dims` with unbound symbols at `hint` (for default points and launches)."""
    out = 1
    for d in program.concrete_shape(tuple(dims), hint):
        out *= d
    return out


# ---------------------------------------------------------------------------------------------
# Expressions

def expression_ctype(root: Node, stop: Node | None = None) -> str:
    """The C type an elementwise expression computes in: double if anything is f64, else float
    if anything is floating, else the widest integer (nodes below `stop` are not looked at)."""
    # Python scalars are weakly typed (an int literal must not widen i32 math to 64 bits).
    dtypes = [n.dtype for n in _walk_until(root, stop) if n.op != "const"]
    if any(d.name == "f64" for d in dtypes):
        return "double"
    if any(d.is_float for d in dtypes):
        return "float"
    return "long long" if any(d.name == "i64" for d in dtypes) else "int"


def _walk_until(root: Node, stop: Node | None) -> list[Node]:
    out, seen, stack = [], set(), [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        if n is not stop:
            stack.extend(n.args)
    return out


def input_nodes(root: Node, stop: Node | None = None) -> list[Node]:
    """The input nodes of `root`, not looking below `stop`, one per name, in first-use order."""
    names: dict[str, Node] = {}
    for n in root.walk() if stop is None else _walk_until(root, stop):
        if n.op == "input" and n.name not in names and (stop is None or n is not stop):
            names[n.name] = n
    return list(names.values())


def leaf_value(dtype: DType, raw: str, ctype: str) -> str:
    """A loaded element `raw` of `dtype` as a value of the compute type `ctype`."""
    if dtype.is_low_precision:
        value = load_as_compute(dtype, raw)
        return value if ctype == "float" else f"({ctype}){value}"
    return raw if dtype.c_type == ctype else f"({ctype}){raw}"


def emit_expression(root: Node, raw_inputs: dict[str, str], ctype: str, *,
                    anchor: Node | None = None, anchor_value: str | None = None,
                    prefix: str = "t") -> Emitted:
    """Scalar code for `root` given each input's raw loaded element (by input name) and, for an
    epilogue, the C expression of the anchor's value (already in `ctype`)."""
    leaves: dict[int, str] = {}
    if anchor is not None:
        leaves[id(anchor)] = anchor_value or ""
        # Nodes only below the anchor are not epilogue code: make them opaque leaves.
        reachable = {id(n) for n in _walk_until(root, anchor)}
        leaves.update({id(n): "" for n in root.walk() if id(n) not in reachable})
    for n in (root.walk() if anchor is None else _walk_until(root, anchor)):
        if n.op == "input" and id(n) not in leaves:
            leaves[id(n)] = leaf_value(n.dtype, raw_inputs[n.name], ctype)
    return emit(root, leaves, ctype, prefix)


def indent(code: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line.strip() else "" for line in code.splitlines())


# ---------------------------------------------------------------------------------------------
# Reductions: how partial results combine

@dataclass(frozen=True)
class Reducer:
    """How one reduction folds elements and merges partial results.

    `acc_type` is the partial's C type, `identity` its neutral value; `device_code` defines
    `struct Combine` (and `ArgPair` for argmax/argmin); `fold(acc, value, index)` is the
    statement adding one element; `result(acc)` the reduced value in `value_type`.
    """
    op: str
    value_type: str      # C type elements are reduced in
    acc_type: str
    identity: str
    device_code: str

    def fold(self, acc: str, value: str, index: str) -> str:
        if self.op in ("argmax", "argmin"):
            return f"{acc} = Combine()({acc}, ArgPair{{{value}, {index}}});"
        return f"{acc} = Combine()({acc}, {value});"

    def result(self, acc: str) -> str:
        return f"{acc}.index" if self.op in ("argmax", "argmin") else acc


def reducer(op: str, in_dtype: DType) -> Reducer:
    """The reducer of `op` over elements of `in_dtype` (the anchor's argument). Floating
    reductions run in float (double for f64), integer sums and products in long long."""
    float_in = in_dtype.is_float
    if float_in:
        vtype = "double" if in_dtype.name == "f64" else "float"
    elif op in ("sum", "prod", "mean") or in_dtype.name == "i64":
        vtype = "long long"
    else:
        vtype = "int"
    if op in ("sum", "mean", "prod"):
        sym, ident = ("+", "0") if op != "prod" else ("*", "1")
        ident = ident + (".0f" if vtype == "float" else ".0" if vtype == "double" else "")
        body = f"return a {sym} b;"
        return Reducer(op, vtype, vtype, f"({vtype}){ident}", _combine(vtype, body, op))
    lowest = {"float": "-INFINITY", "double": "-(double)INFINITY", "int": "INT32_MIN",
              "long long": "INT64_MIN"}[vtype]
    highest = {"float": "INFINITY", "double": "(double)INFINITY", "int": "INT32_MAX",
               "long long": "INT64_MAX"}[vtype]
    greater = op in ("max", "argmax")
    cmp = ">" if greater else "<"
    if op in ("max", "min"):
        # NaN wins, as in torch.max/min.
        nan = "a != a || " if float_in else ""
        body = f"return ({nan}a {cmp} b) ? a : b;"
        return Reducer(op, vtype, vtype, lowest if greater else highest, _combine(vtype, body, op))
    # argmax/argmin: the first NaN, else the best value, ties to the smallest index (torch).
    if float_in:
        body = ("const bool a_nan = a.value != a.value, b_nan = b.value != b.value;\n"
                "if (a_nan || b_nan) return (a_nan && (!b_nan || a.index < b.index)) ? a : b;\n"
                f"if (a.value != b.value) return a.value {cmp} b.value ? a : b;\n"
                "return a.index < b.index ? a : b;")
    else:
        body = (f"if (a.value != b.value) return a.value {cmp} b.value ? a : b;\n"
                "return a.index < b.index ? a : b;")
    pair = (f"// A candidate of {op}: its value and its index along the reduced axes.\n"
            f"struct ArgPair {{\n    {vtype} value;\n    long long index;\n}};\n\n")
    return Reducer(op, vtype, "ArgPair", f"ArgPair{{{lowest if greater else highest}, INT64_MAX}}",
                   pair + _combine("ArgPair", body, op))


def _combine(acc_type: str, body: str, op: str) -> str:
    return (f"// Merges two partial results of {op} (also one partial and one element).\n"
            f"struct Combine {{\n"
            f"    __device__ __forceinline__ {acc_type} operator()({acc_type} a, {acc_type} b) const {{\n"
            f"{indent(body, 8)}\n"
            f"    }}\n}};")


# ---------------------------------------------------------------------------------------------
# How each input is read along a run of packs of a larger (contiguous) shape

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
# Text

def kernel_param_list(params: Sequence[Param]) -> list[str]:
    """Kernel parameters matching the launcher's: restrict pointers, then `long long` symbols."""
    return [f"{p.c_type} __restrict__ {p.name}" if p.role != "symbol" else f"long long {p.name}"
            for p in params]


def shape_text(shape: Shape) -> str:
    return " x ".join(str(d) for d in shape) if shape else "1"


def describe(problem: Problem) -> str:
    """The intent's computation on one line, for the kernel's comment."""
    program = problem.program
    first = program.text.strip().splitlines()[0] if program.text.strip() else ""
    return first or f"{program.output_name} = {problem.output!r}"


# ---------------------------------------------------------------------------------------------
# Row-wise fused operators (softmax, norms): prologue on the argument, epilogue on the result

@dataclass
class RowwisePlan:
    """An operator mapping each row of its argument to a row of the output (softmax along an
    axis, a norm over the last axis), with a fused elementwise prologue and epilogue."""
    problem: Problem
    anchor: Node
    arg: Node
    view: AxisView
    ctype: str                # what the operator computes in (float; double for f64)
    prologue_ctype: str
    epilogue_ctype: str

    def accesses(self, vec: int) -> list[Access]:
        return [plan_access(n, self.arg.shape, vec) for n in input_nodes(self.arg)]

    def vec_width(self) -> int:
        dtypes = [n.dtype for n in input_nodes(self.arg)] + [self.problem.output.dtype]
        return pack_width(dtypes)

    def value_code(self, raw: dict[str, str], var: str) -> str:
        """Statements defining `const ctype var`: the argument's element from raw loads."""
        emitted = emit_expression(self.arg, raw, self.prologue_ctype, prefix=f"{var}_")
        value = emitted.value if self.prologue_ctype == self.ctype else f"({self.ctype})({emitted.value})"
        return "\n".join(emitted.statements + [f"const {self.ctype} {var} = {value};"])

    def store_code(self, value: str, out_index: str, target: str) -> str:
        """Statements writing the output element at linear `out_index` into `target`, given
        the operator's value there (a C expression in `ctype`)."""
        out = self.problem.output
        raw = {n.name: f"{n.name}[{broadcast_offset(n.shape, out.shape, out_index)}]"
               for n in input_nodes(out, stop=self.anchor)}
        anchor_value = value if self.ctype == self.epilogue_ctype else f"({self.epilogue_ctype})({value})"
        emitted = emit_expression(out, raw, self.epilogue_ctype, anchor=self.anchor,
                                  anchor_value=anchor_value, prefix="epi")
        return "\n".join(emitted.statements + [f"{target} = {store_from_compute(out.dtype, emitted.value)};"])

    def packed_check(self, vec: int, extent: str) -> str:
        """The launcher's condition for 16-byte packs: the packed extent a multiple of `vec`
        and every packed pointer (inputs read as packs, the output) 16-byte aligned."""
        if vec == 1:
            return "true"
        pointers = [a.name for a in self.accesses(vec) if a.packed] + [self.problem.program.output_name]
        addr = " | ".join(f"reinterpret_cast<uintptr_t>({n})" for n in pointers)
        return f"{paren(extent)} % {vec} == 0 && (({addr}) % 16) == 0"


def rowwise_plan(problem: Problem, dims: Sequence[int]) -> RowwisePlan | str:
    """The plan of a row-wise operator over `dims` of its first argument, or why none."""
    anchor = problem.anchor
    assert anchor is not None
    arg = anchor.args[0]
    view = axis_view(arg.shape, dims)
    if view is None:
        return "the axes are not adjacent"
    if tuple(problem.output.shape) != tuple(anchor.shape):
        return "the epilogue changes the shape of the result"
    ctype = "double" if anchor.dtype.name == "f64" else "float"
    return RowwisePlan(problem, anchor, arg, view, ctype, expression_ctype(arg),
                       expression_ctype(problem.output, stop=anchor))


def tidy(code: str) -> str:
    """Cosmetics for generated code: each `#pragma` indented like the statement it governs,
    and no blank lines left where an optional statement was empty."""
    lines = code.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip() and out and out[-1].rstrip().endswith(("{", ";")) and \
                i + 1 < len(lines) and lines[i + 1].startswith(" "):
            continue    # an empty optional line inside a block
        if line.lstrip().startswith("#pragma"):
            following = next((n for n in lines[i + 1:] if n.strip()), "")
            line = " " * (len(following) - len(following.lstrip())) + line.strip()
        out.append(line.rstrip())
    return "\n".join(out)


# Names every memory-bound region declares (helpers, launcher locals) or that C++/CUDA own; each
# family adds the locals of its own kernels. Kernel parameters carry the intent's names.
COMMON_NAMES = frozenset("""
    ArgPair Combine MaxOp SumOp MaxSum MergeMaxSum Welford MergeWelford Pack load_pack store_pack
    shfl_down shfl_idx group_reduce online_add welford_add welford_add_pack workspace
    kn stream packed aligned grid blocks block
    threadIdx blockIdx blockDim gridDim warpSize dim3 auto bool break case char const continue default
    do double else enum extern false float for goto if inline int long namespace new operator private
    public register return short signed sizeof static struct switch template this true typedef union
    unsigned void volatile while
""".split())
_GENERATED = re.compile(r"(k[A-Z]\w*|(pro|epi|t|val_)\d+|\w+_(pack|first))$")


def name_clash(problem: Problem, locals_: frozenset[str]) -> str | None:
    """Why a tensor or symbol name cannot be a kernel parameter next to `locals_`, or None."""
    program = problem.program
    for name in [*program.inputs, program.output_name, *program.symbol_names()]:
        if name in COMMON_NAMES or name in locals_ or _GENERATED.match(name):
            return f"the name '{name}' is used by the generated kernel itself; rename the tensor or symbol"
    return None


# ---------------------------------------------------------------------------------------------
# A shared-memory row cache (row-wise operators whose row is too long for registers)

def row_cache_bytes(p: RowwisePlan, point: Point) -> int:
    """Dynamic shared memory for caching each of the block's rows (known row length)."""
    rows_per_block = point["threads"] // point["group"]
    return rows_per_block * (p.view.reduced_int or 0) * (8 if p.ctype == "double" else 4)


def row_cache_declaration(p: RowwisePlan) -> str:
    return (f"    extern __shared__ __align__(32) unsigned char row_cache_bytes[];\n"
            f"    {p.ctype}* const row_cache = reinterpret_cast<{p.ctype}*>(row_cache_bytes) +\n"
            f"                            (threadIdx.x / kGroup) * {p.view.reduced};   // this group's row\n")


def dynamic_smem_lines(arch: ArchSpec, kernel: str, smem_bytes: int) -> str:
    """Launcher lines defining `smem_bytes`; past the default per-block limit, the kernel opts
    in (once) to the larger dynamic shared memory size."""
    if smem_bytes <= arch.smem_per_block_default:
        return f"    const size_t smem_bytes = {smem_bytes};"
    return (f"    const size_t smem_bytes = {smem_bytes};   // the row cache, past the default limit\n"
            f"    static const bool opted_in = cudaFuncSetAttribute(kn::{kernel}, "
            f"cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes) == cudaSuccess;\n"
            f"    if (!opted_in) return;")


# ---------------------------------------------------------------------------------------------
# Rows split over several blocks (two kernels, partials in a workspace)

def workspace_code(acc_type: str) -> str:
    """A launcher-side device buffer for stage-1 partials of type `acc_type`."""
    return f"""\
// Stage-1 partials: a device buffer grown on demand and kept for later calls (no allocation
// in steady state). Freeing the old buffer synchronizes the device, so it is never in use.
inline {acc_type}* workspace(long long count) {{
    static void* buffer = nullptr;
    static long long capacity = 0;
    if (count > capacity) {{
        if (buffer != nullptr) cudaFree(buffer);
        if (cudaMalloc(&buffer, count * sizeof({acc_type})) != cudaSuccess) {{
            buffer = nullptr;
            capacity = 0;
            return nullptr;
        }}
        capacity = count;
    }}
    return static_cast<{acc_type}*>(buffer);
}}"""


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
