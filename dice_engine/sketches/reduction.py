"""Reductions (sum mean prod max min argmax argmin) along any contiguous run of axes.

The reduced tensor is viewed as [outer, reduced, inner] (row-major, so a "row" is `reduced`
consecutive elements when inner == 1). Three sketches:

- `reduction.rows` (inner == 1): a group of G threads per row (a sub-warp, a warp, or several
  warps of a block), 16-byte packs along the row, a shuffle tree and, past one warp, a fixed-
  order pass over the group's warps in shared memory.
- `reduction.columns` (inner > 1): threads along the kept inner axis (coalesced, `vec` columns
  each), `split` threads of the block along the reduced axis merged through shared memory, and
  optionally `chunks` blocks along the reduced axis with a second kernel merging their partials.
- `reduction.split_rows` (inner == 1, few long rows, full reductions): `chunks` blocks per row
  write partials; a second kernel merges them per row in a fixed order.

No float atomics anywhere: every merge happens in a fixed order, so results are bitwise
reproducible run to run. Float sums and means over LONG_REDUCTION elements or more (in
`reduction.columns`, whose threads each own a column, COLUMN_LONG_REDUCTION) carry a
compensated partial (`Compensated`: a running sum and the rounding error it has dropped, kept
exact by TwoSum on every fold and merge), so their error against a float64 truth does not grow
with the length of any thread's serial share, whatever the sketch's split. A fused prologue
(the reduced expression, e.g. x*x) is computed per element; a fused epilogue (e.g. sqrt of a
mean) per output. argmax/argmin keep torch's first
index on ties (and the first NaN).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..arch import ArchSpec
from ..ir.dtypes import DType
from ..ir.graph import Node
from ..ir.patterns import Problem
from .access import (SPLIT_ROW_PROLOGUE, Access, AxisView, axis_view, broadcast_offset, chunk_loops,
                     fitting_vec, hint_int, pack_element, pack_registers, pack_step, paren, plan_access,
                     scalar_element, vec_violation)
from .base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, accepted, launcher_params,
                   store_from_compute)
from .columns import COLUMN_INDEX, COLUMN_TILES, column_partials, column_tile, column_tiles, column_tokens
from .fusion import (axis_unsupported, describe, emit_expression, expression_ctype, input_nodes,
                       kernel_param_list)
from .rowwise import row_group
from .warp import (PACK_HELPERS, SHUFFLE_HELPERS, block_threads_violation, indent, launcher_opening,
                   min_blocks_per_sm, pack_width, partials_smem_bytes, pow2_floor, pow2_range,
                   register_budget, rendered_kernel, shrink_unroll, wave_grid_cap, workspace_code)

BASE_REGISTERS = 32      # indices, loop state and the accumulator's neighbours
LONG_REDUCTION = 1 << 16  # reduced elements from which float sums and means accumulate compensated
# ... in reduction.columns: a thread there owns a column, so its serial share is most of the axis
# (PyTorch's columns reduce in trees of short shares: its error at 4096 rows is ~1.6 ulp)
COLUMN_LONG_REDUCTION = 256
ROW_GRID_WAVES = 4       # grid-stride cap for the rows kernel, in waves of resident blocks


# Identifiers the kernels below declare (a tensor or symbol must not shadow them).
LOCALS = frozenset("""
    rows row_len lane row0 row acc row_start scalar_from first_pack n_packs next_pack pack_end slot
    pack elem col partials warp_partials outer inner tiles_per_outer outer_idx j0 chunk_len r_begin
    r_end base red total part out_index count chunk begin end tile_partials tiles merge_blocks
    merge_grid two_sum
""".split())


# ---------------------------------------------------------------------------------------------
# How partial results combine

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
        if self.acc_type == "Compensated":
            return f"({acc}.sum + {acc}.error)"
        return f"{acc}.index" if self.op in ("argmax", "argmin") else acc

    @property
    def host_type(self) -> str:
        """The partial's type as the launcher (outside the region's namespace) names it."""
        return f"kn::{self.acc_type}" if self.acc_type in ("ArgPair", "Compensated") else self.acc_type


def reducer(op: str, in_dtype: DType, length: int = 1, long_from: int = LONG_REDUCTION) -> Reducer:
    """The reducer of `op` over `length` elements of `in_dtype` (the anchor's argument).
    Floating reductions run in float (double for f64), integer sums and products in long long;
    float sums and means of `long_from` elements or more are compensated."""
    float_in = in_dtype.is_float
    if float_in:
        vtype = "double" if in_dtype.name == "f64" else "float"
    elif op in ("sum", "prod", "mean") or in_dtype.name == "i64":
        vtype = "long long"
    else:
        vtype = "int"
    if op in ("sum", "mean") and vtype == "float" and length >= long_from:
        return Reducer(op, vtype, "Compensated", "Compensated{0.0f, 0.0f}", _COMPENSATED)
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

_COMPENSATED = """\
// A float partial sum and the rounding error it has dropped (sum + error is the running total
// to about twice float precision): TwoSum recovers each addition's error exactly, so a long
// serial share adds no error growth. nvcc keeps the order (no reassociation without fast-math).
struct Compensated {
    float sum;
    float error;
};

__device__ __forceinline__ Compensated two_sum(float a, float b) {
    const float s = a + b;
    const float b_part = s - a;
    return Compensated{s, (a - (s - b_part)) + (b - b_part)};
}

// Merges two partial sums (also one partial and one element).
struct Combine {
    __device__ __forceinline__ Compensated operator()(Compensated a, Compensated b) const {
        const Compensated s = two_sum(a.sum, b.sum);
        return Compensated{s.sum, s.error + (a.error + b.error)};
    }
    __device__ __forceinline__ Compensated operator()(Compensated a, float value) const {
        const Compensated s = two_sum(a.sum, value);
        return Compensated{s.sum, s.error + a.error};
    }
};"""


def _combine(acc_type: str, body: str, op: str) -> str:
    return (f"// Merges two partial results of {op} (also one partial and one element).\n"
            f"struct Combine {{\n"
            f"    __device__ __forceinline__ {acc_type} operator()({acc_type} a, {acc_type} b) const {{\n"
            f"{indent(body, 8)}\n"
            f"    }}\n}};")


# ---------------------------------------------------------------------------------------------
# The plan every reduction sketch derives

@dataclass
class ReductionPlan:
    """What every reduction sketch derives from the problem."""
    problem: Problem
    anchor: Node
    arg: Node                 # the reduced expression (the prologue's root)
    view: AxisView            # arg's shape as [outer, reduced, inner]
    reducer: Reducer
    prologue_ctype: str
    epilogue_ctype: str
    inputs: list[Node]        # the prologue's inputs

    @property
    def op(self) -> str:
        return self.anchor.op

    def accesses(self, vec: int) -> list[Access]:
        return [plan_access(n, self.arg.shape, vec) for n in self.inputs]

    def vec_width(self) -> int:
        return pack_width([n.dtype for n in self.inputs] or [self.arg.dtype])

    def acc_words(self) -> int:
        return {"ArgPair": 4, "Compensated": 2, "double": 2, "long long": 2}.get(self.reducer.acc_type, 1)

    def fold_code(self, raw: dict[str, str], index: str, acc: str = "acc") -> str:
        """Statements folding the element whose raw inputs are `raw` (index `index` along the
        reduced axes) into `acc`."""
        emitted = emit_expression(self.arg, raw, self.prologue_ctype, prefix="pro")
        value = emitted.value
        if self.prologue_ctype != self.reducer.value_type:
            value = f"({self.reducer.value_type})({value})"
        return "\n".join(emitted.statements + [self.reducer.fold(acc, value, index)])

    def result_code(self, acc: str, out_index: str) -> str:
        """Statements storing output element `out_index` from the merged partial `acc`."""
        value = self.reducer.result(acc)
        if self.op == "mean":
            value = f"{self.reducer.result(acc)} / ({self.reducer.value_type})row_len"
        out = self.problem.output
        raw = {n.name: f"{n.name}[{broadcast_offset(n.shape, out.shape, out_index)}]"
               for n in self.epilogue_inputs()}
        anchor_value = value if self._anchor_ctype() == self.epilogue_ctype else \
            f"({self.epilogue_ctype})({value})"
        emitted = emit_expression(out, raw, self.epilogue_ctype, anchor=self.anchor,
                                  anchor_value=anchor_value, prefix="epi")
        name = self.problem.program.output_name
        return "\n".join(emitted.statements +
                         [f"{name}[{out_index}] = {store_from_compute(out.dtype, emitted.value)};"])

    def _anchor_ctype(self) -> str:
        return "long long" if self.op in ("argmax", "argmin") else self.reducer.value_type

    def epilogue_inputs(self) -> list[Node]:
        return input_nodes(self.problem.output, stop=self.anchor)

    def packed_pointers(self, vec: int) -> list[str]:
        return [a.name for a in self.accesses(vec) if a.packed]


def plan(problem: Problem, long_from: int = LONG_REDUCTION) -> ReductionPlan | str:
    """The plan, or why no reduction sketch can serve `problem` (`long_from`: the reduced length
    from which float sums and means are compensated)."""
    anchor = problem.anchor
    if anchor is None or anchor.op not in ("sum", "mean", "prod", "max", "min", "argmax", "argmin"):
        return "not a reduction"
    arg = anchor.args[0]
    view = axis_view(arg.shape, anchor.attr("dim"))
    if view is None:
        return f"the reduced dims {list(anchor.attr('dim'))} are not adjacent"
    out = problem.output
    if _squeezed(out.shape) != _squeezed(anchor.shape):
        return "the epilogue broadcasts the reduced result back over the input (a normalization)"
    length = hint_int(problem.program, view.reduced_dims)
    return ReductionPlan(problem, anchor, arg, view, reducer(anchor.op, arg.dtype, length, long_from),
                         expression_ctype(arg), expression_ctype(out, stop=anchor),
                         input_nodes(arg))


def _squeezed(shape) -> tuple:
    return tuple(d for d in shape if d != 1)


def _common_device_code(p: ReductionPlan, shuffles: bool) -> str:
    parts = [PACK_HELPERS, p.reducer.device_code]
    if shuffles:
        parts.append(SHUFFLE_HELPERS)
    return "\n\n".join(parts)


def _common_space_checks(p: ReductionPlan, arch: ArchSpec, threads_of, words_in_flight):
    def threads_fit(pt: Point) -> str | None:
        return block_threads_violation(arch, threads_of(pt))

    def registers_fit(pt: Point) -> str | None:
        budget = register_budget(arch, threads_of(pt))
        need = BASE_REGISTERS + words_in_flight(pt) + 2 * p.acc_words()
        if need > budget:
            return f"~{need} registers per thread needed, {budget} available at {threads_of(pt)} threads"
        return None

    def vec_divides(pt: Point) -> str | None:
        if p.view.last_axis:
            return vec_violation("row length", p.view.reduced_int, pt["vec"])
        return vec_violation("inner extent", p.view.inner_int, pt["vec"])

    return [threads_fit, registers_fit, vec_divides]


def _words_per_pack(p: ReductionPlan, pt: Point) -> int:
    return pack_registers(p.accesses(pt["vec"]), pt["vec"], pt["unroll"])


def _packed_check(p: ReductionPlan, vec: int, extent_c: str) -> str:
    pointers = p.packed_pointers(vec)
    checks = [f"{paren(extent_c)} % {vec} == 0"] if vec > 1 else []
    if vec > 1 and pointers:
        addr = " | ".join(f"reinterpret_cast<uintptr_t>({n})" for n in pointers)
        checks.append(f"(({addr}) % 16) == 0")
    return " && ".join(checks) if checks else "true"


def _strategy_header(p: ReductionPlan) -> str:
    v = p.view
    return f"// {describe(p.problem)}\n// viewed as [outer={v.outer}, reduced={v.reduced}, inner={v.inner}]"


def _pack_step(p: ReductionPlan, accesses: list[Access], slots: int, pack_of_slot: str,
               index: str, acc: str = "acc") -> str:
    """Folds `slots` packs (all in flight together); `index` is an element's index along the
    reduced axes (a C expression of pack, slot and elem)."""
    raw = {a.name: pack_element(a, "slot", "elem", "pack * kVec + elem") for a in accesses}
    return pack_step(accesses, slots, pack_of_slot, p.fold_code(raw, index, acc))


# ---------------------------------------------------------------------------------------------
# reduction.rows

class RowReduction(Sketch):
    name = "reduction.rows"
    pattern = "reduction"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return axis_unsupported(problem, LOCALS, plan, last_axis=True,
                                otherwise="the reduced axes are not the innermost (rows sketch)")

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        p = _plan(problem)
        tokens = [
            Token("group", pow2_range(4, 1024), "threads cooperating on one row", (Role.THREADS,)),
            Token("threads", (64, 128, 256, 512, 1024), "threads per block (threads/group rows per block)",
                  (Role.THREADS,)),
            Token("vec", tuple(sorted({1, p.vec_width()})), "elements per load (16-byte packs when > 1)",
                  (Role.VECTOR,)),
            Token("unroll", (1, 2, 4), "packs in flight per thread per step", (Role.UNROLL,)),
        ]

        def group_fits(pt: Point) -> str | None:
            if pt["threads"] % pt["group"]:
                return f"group={pt['group']} does not divide threads={pt['threads']}"
            return None

        checks = _common_space_checks(p, arch, lambda pt: pt["threads"], lambda pt: _words_per_pack(p, pt))
        return DesignSpace(tokens, [group_fits, *checks])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        p = _plan(problem)
        vec = fitting_vec(p.view.reduced_int, p.vec_width())
        packs = max(1, -(-hint_int(problem.program, p.view.reduced_dims) // vec))
        group = row_group(problem.program, p.view, arch, vec, max_packs=16)
        per_thread = -(-packs // group)
        unroll = 4 if per_thread >= 16 else 2 if per_thread >= 4 else 1
        point = {"group": group, "threads": max(256, group), "vec": vec, "unroll": unroll}
        return shrink_unroll(self.space(problem, arch), point)

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        p = _plan(problem)
        group, threads, vec, unroll = point["group"], point["threads"], point["vec"], point["unroll"]
        accesses = p.accesses(vec)
        params = launcher_params(problem)
        signature = ", ".join(kernel_param_list(params))
        kernel = f"{name}_kernel"
        acc_t = p.reducer.acc_type
        raw_scalar = {a.name: scalar_element(a, "row_start + col") for a in accesses}
        partials = "warp_partials" if group > 32 else "nullptr"
        shared = (f"    __shared__ {acc_t} warp_partials[kThreads / 32];\n" if group > 32 else "")
        step = _pack_step(p, accesses, unroll, "next_pack + slot * kGroup",
                          "pack * kVec - row_start + elem")
        tail_step = _pack_step(p, accesses, 1, "next_pack", "pack * kVec - row_start + elem")
        device = f"""\
constexpr int kThreads = {threads};
constexpr int kMinBlocks = {min_blocks_per_sm(arch, threads)};  // per SM, for ptxas's register budget
constexpr int kGroup = {group};      // threads per row
constexpr int kRowsPerBlock = kThreads / kGroup;
constexpr int kVec = {vec};        // elements per load{" (16 bytes)" if vec > 1 else ""}
constexpr int kUnroll = {unroll};     // packs in flight per thread per step

{_common_device_code(p, shuffles=True)}

{_strategy_header(p)}
// A group of kGroup threads reduces one row: packs strided by kGroup (coalesced), then a
// deterministic shuffle tree{" and a pass over the group's warps" if group > 32 else ""}.
__global__ void __launch_bounds__(kThreads, kMinBlocks) {kernel}({signature}, bool packed) {{
{shared}    const long long rows = {p.view.outer};
    const long long row_len = {p.view.reduced};
    const int lane = threadIdx.x % kGroup;
    // Uniform trip count for the whole block: group_reduce may hold barriers.
    for (long long row0 = (long long)blockIdx.x * kRowsPerBlock; row0 < rows;
         row0 += (long long)gridDim.x * kRowsPerBlock) {{
        const long long row = row0 + threadIdx.x / kGroup;
        {acc_t} acc = {p.reducer.identity};
        if (row < rows) {{
            const long long row_start = row * row_len;
            long long scalar_from = 0;
            if (packed) {{   // row_len % kVec == 0 and the packed pointers are 16-byte aligned
                const long long first_pack = row_start / kVec, n_packs = row_len / kVec;
                long long next_pack = first_pack + lane;
                const long long pack_end = first_pack + n_packs;
                #pragma unroll 1
                for (; next_pack + (kUnroll - 1) * kGroup < pack_end; next_pack += kUnroll * kGroup) {{
{indent(step, 20)}
                }}
                #pragma unroll 1
                for (; next_pack < pack_end; next_pack += kGroup) {{
{indent(tail_step, 20)}
                }}
                scalar_from = n_packs * kVec;
            }}
            #pragma unroll 1
            for (long long col = scalar_from + lane; col < row_len; col += kGroup) {{
{indent(p.fold_code(raw_scalar, "col"), 16)}
            }}
        }}
        acc = group_reduce<kGroup>(acc, Combine(), ({acc_t}*){partials});
        if (lane == 0 && row < rows) {{
{indent(p.result_code("acc", "row"), 12)}
        }}
    }}
}}"""
        rows_hint = hint_int(problem.program, p.view.outer_dims)
        cap = wave_grid_cap(arch, threads, ROW_GRID_WAVES)
        args = ", ".join([q.name for q in params] + ["packed"])
        launcher = f"""\
{launcher_opening(name, params, {"rows": p.view.outer}, "rows == 0")}
    const bool packed = {_packed_check(p, vec, p.view.reduced)};
    const long long blocks = (rows + kn::kRowsPerBlock - 1) / kn::kRowsPerBlock;
    // Past {ROW_GRID_WAVES} waves of resident blocks, the blocks stride over the rows.
    const unsigned grid = (unsigned)(blocks < {cap} ? blocks : {cap});
    kn::{kernel}<<<grid, kn::kThreads, 0, stream>>>({args});
}}"""
        who = "sub-warp" if group < 32 else "one warp" if group == 32 else f"{group // 32} warps"
        strategy = (f"{p.op} over rows, {group} threads per row ({who}), "
                    f"{threads} threads per block, {vec}-element loads, {unroll} in flight")
        blocks = min(-(-rows_hint // (threads // group)), cap)
        smem = (threads // 32) * 4 * p.acc_words() if group > 32 else 0
        return rendered_kernel(self.name, point, name, strategy, device, launcher, params,
                         [Launch(kernel, (blocks, 1, 1), (threads, 1, 1), smem)])


# ---------------------------------------------------------------------------------------------
# reduction.columns

class ColumnReduction(Sketch):
    name = "reduction.columns"
    pattern = "reduction"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return axis_unsupported(problem, LOCALS, plan, last_axis=False,
                                otherwise="the reduced axes are the innermost (use a rows sketch)")

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        p = _column_plan(problem)
        tokens = [
            *column_tokens(p.vec_width(), "threads of a block along the reduced axis"),
            Token("unroll", (1, 2, 4, 8), "reduced-axis steps in flight per thread", (Role.UNROLL,)),
            Token("chunks", (1, 4, 16, 64), "blocks along the reduced axis (>1: a second merge kernel)",
                  (Role.SPLIT,)),
        ]

        def smem_fits(pt: Point) -> str | None:
            need = partials_smem_bytes(pt["split"], pt["tile"], pt["vec"], 4 * p.acc_words())
            if need > arch.smem_per_block_default:
                return f"{need} bytes of shared memory exceed {arch.smem_per_block_default}"
            return None

        def threads_of(pt: Point) -> int:
            return pt["tile"] * pt["split"]

        def words(pt: Point) -> int:
            return _words_per_pack(p, pt) + pt["vec"] * p.acc_words()

        return DesignSpace(tokens, [smem_fits, *_common_space_checks(p, arch, threads_of, words)])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        p = _column_plan(problem)
        vec = fitting_vec(p.view.inner_int, p.vec_width())
        inner = hint_int(problem.program, p.view.inner_dims)
        outer = hint_int(problem.program, p.view.outer_dims)
        reduced = hint_int(problem.program, p.view.reduced_dims)
        tile = column_tile(inner, vec)
        columns_threads = outer * -(-inner // vec)
        # Enough threads for ~two resident waves: split the reduced axis inside blocks first,
        # then across blocks when the kept extent is small.
        want = 2 * arch.sms * arch.max_threads_per_sm
        split = min(32, max(1, pow2_floor(want // max(1, columns_threads))), max(1, 1024 // tile))
        split = min(split, pow2_floor(max(1, reduced)))
        chunks = 1
        while (chunks < 64 and columns_threads * split * chunks * 4 < want
               and reduced // (split * chunks * 4) >= 64):
            chunks *= 4
        # single-column threads (vec=1: an odd inner extent) keep 8 rows in flight, so a thread
        # still has 32 bytes of 4-byte loads outstanding against DRAM latency
        per_thread = reduced // (split * chunks)
        unroll = (8 if vec == 1 and per_thread >= 128 else 4) if per_thread >= 64 else 1
        point = {"tile": tile, "split": split, "vec": vec, "unroll": unroll, "chunks": chunks}
        return shrink_unroll(self.space(problem, arch), point)

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        p = _column_plan(problem)
        tile, split, vec, unroll, chunks = (point[k] for k in ("tile", "split", "vec", "unroll", "chunks"))
        threads = tile * split
        accesses = p.accesses(vec)
        params = launcher_params(problem)
        signature = ", ".join(kernel_param_list(params))
        kernel, merge = f"{name}_kernel", f"{name}_merge_kernel"
        acc_t = p.reducer.acc_type
        linear = "(base + red * inner)"
        pack_step = _pack_step(p, accesses, unroll, "(base + (red + slot * kSplit) * inner) / kVec",
                               "red + slot * kSplit", "acc[elem]")
        pack_tail = _pack_step(p, accesses, 1, "(base + red * inner) / kVec", "red", "acc[elem]")
        raw_scalar = {a.name: scalar_element(a, f"{linear} + elem") for a in accesses}
        two_stage = chunks > 1
        finish = (p.result_code("total", "out_index") if not two_stage
                  else "partials[(long long)blockIdx.y * outer * inner + out_index] = total;")
        kernel_args = kernel_param_list(params) + ["bool packed"] + ([f"{acc_t}* __restrict__ partials"]
                                                                      if two_stage else [])
        merge_code = ""
        if two_stage:
            merge_code = f"""

// Stage 2: merges the kChunks partials of each output in chunk order (deterministic).
__global__ void __launch_bounds__(256) {merge}({signature}, const {acc_t}* __restrict__ partials) {{
    const long long inner = {p.view.inner};
    const long long row_len = {p.view.reduced};
    const long long count = {p.view.outer} * inner;
    for (long long out_index = (long long)blockIdx.x * 256 + threadIdx.x; out_index < count;
         out_index += (long long)gridDim.x * 256) {{
        {acc_t} total = partials[out_index];
        for (int chunk = 1; chunk < kChunks; ++chunk)
            total = Combine()(total, partials[chunk * count + out_index]);
{indent(p.result_code("total", "out_index"), 8)}
    }}
    (void)row_len;
}}"""
        device = f"""\
constexpr int kTile = {tile};     // threads along the inner axis, kVec adjacent columns each
constexpr int kSplit = {split};    // threads along the reduced axis
constexpr int kThreads = kTile * kSplit;
constexpr int kMinBlocks = {min_blocks_per_sm(arch, threads)};  // per SM, for ptxas's register budget
constexpr int kVec = {vec};
constexpr int kUnroll = {unroll};   // reduced-axis steps in flight per thread
constexpr int kChunks = {chunks};   // blocks along the reduced axis

{_common_device_code(p, shuffles=False)}

{_strategy_header(p)}
// Block (tile, chunk): threads walk the reduced axis of kVec adjacent columns, coalesced
// across threadIdx.x; the kSplit partials of a column merge in shared memory in a fixed order.
__global__ void __launch_bounds__(kThreads, kMinBlocks) {kernel}({", ".join(kernel_args)}) {{
{column_partials(acc_t, "tile_partials", tile, vec, 4 * p.acc_words())}
    const long long outer = {p.view.outer};
    const long long row_len = {p.view.reduced};
    const long long inner = {p.view.inner};
{COLUMN_INDEX}
    const long long chunk_len = (row_len + kChunks - 1) / kChunks;
    const long long r_begin = blockIdx.y * chunk_len;
    const long long r_end = r_begin + chunk_len < row_len ? r_begin + chunk_len : row_len;
    // Element (outer_idx, red, j0) sits at base + red * inner.
    const long long base = outer_idx * row_len * inner + j0;
    {acc_t} acc[kVec];
#pragma unroll
    for (int elem = 0; elem < kVec; ++elem) acc[elem] = {p.reducer.identity};
    if (j0 < inner) {{
        long long red = r_begin + threadIdx.y;
        if (packed) {{   // inner % kVec == 0 and the packed pointers are 16-byte aligned
            #pragma unroll 1
            for (; red + (kUnroll - 1) * kSplit < r_end; red += kUnroll * kSplit) {{
{indent(pack_step, 16)}
            }}
            #pragma unroll 1
            for (; red < r_end; red += kSplit) {{
{indent(pack_tail, 16)}
            }}
        }} else {{
            #pragma unroll 1
            for (; red < r_end; red += kSplit) {{
#pragma unroll
                for (int elem = 0; elem < kVec; ++elem) {{
                    if (j0 + elem < inner) {{
{indent(p.fold_code(raw_scalar, "red", "acc[elem]"), 24)}
                    }}
                }}
            }}
        }}
    }}
#pragma unroll
    for (int elem = 0; elem < kVec; ++elem)
        tile_partials[threadIdx.y][elem * kTile + threadIdx.x] = acc[elem];
    __syncthreads();
    if (threadIdx.y == 0) {{
#pragma unroll
        for (int elem = 0; elem < kVec; ++elem) {{
            if (j0 + elem >= inner) break;
            {acc_t} total = tile_partials[0][elem * kTile + threadIdx.x];
            for (int part = 1; part < kSplit; ++part)
                total = Combine()(total, tile_partials[part][elem * kTile + threadIdx.x]);
            const long long out_index = outer_idx * inner + j0 + elem;
{indent(finish, 12)}
        }}
    }}
    (void)outer;
}}{merge_code}"""
        if two_stage:
            device += "\n\n" + workspace_code(acc_t)
        args = ", ".join([q.name for q in params] + ["packed"] + (["partials"] if two_stage else []))
        stage2 = ""
        if two_stage:
            merge_cap = wave_grid_cap(arch, 256, 2)
            stage2 = f"""
    const long long count = outer * inner;
    const long long merge_blocks = (count + 255) / 256;
    const unsigned merge_grid = (unsigned)(merge_blocks < {merge_cap} ? merge_blocks : {merge_cap});
    kn::{merge}<<<merge_grid, 256, 0, stream>>>({", ".join([q.name for q in params] + ["partials"])});"""
        acc_host = p.reducer.host_type
        workspace = (f"\n    {acc_host}* partials = kn::workspace((long long)kn::kChunks * outer * inner);\n"
                     f"    if (partials == nullptr) return;") if two_stage else ""
        launcher = f"""\
{launcher_opening(name, params, {"outer": p.view.outer, "inner": p.view.inner}, "outer * inner == 0")}
    const bool packed = {_packed_check(p, vec, "inner")};{workspace}
    {COLUMN_TILES}
    const dim3 grid((unsigned)tiles, kn::kChunks), block(kn::kTile, kn::kSplit);
    kn::{kernel}<<<grid, block, 0, stream>>>({args});{stage2}
}}"""
        strategy = (f"{p.op} over a non-innermost axis: {tile}x{split} threads (inner x reduced), "
                    f"{vec} columns per thread, {unroll} steps in flight"
                    + (f", {chunks} blocks per column + merge kernel" if two_stage else ""))
        inner_hint = hint_int(problem.program, p.view.inner_dims)
        outer_hint = hint_int(problem.program, p.view.outer_dims)
        tiles = column_tiles(outer_hint, inner_hint, tile, vec)
        smem = partials_smem_bytes(split, tile, vec, 4 * p.acc_words())
        launches = [Launch(kernel, (tiles, chunks, 1), (tile, split, 1), smem)]
        if two_stage:
            launches.append(Launch(merge, (min(-(-outer_hint * inner_hint // 256),
                                               wave_grid_cap(arch, 256, 2)), 1, 1), (256, 1, 1), 0))
        return rendered_kernel(self.name, point, name, strategy, device, launcher, params, launches)


# ---------------------------------------------------------------------------------------------
# reduction.split_rows

class SplitRowReduction(Sketch):
    name = "reduction.split_rows"
    pattern = "reduction"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return axis_unsupported(problem, LOCALS, plan, last_axis=True,
                                otherwise="the reduced axes are not the innermost (split-rows sketch)")

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        p = _plan(problem)
        tokens = [
            Token("threads", (128, 256, 512, 1024), "threads per block", (Role.THREADS,)),
            Token("chunks", (2, 8, 32, 128, 512, 2048), "blocks per row in stage 1", (Role.SPLIT,)),
            Token("vec", tuple(sorted({1, p.vec_width()})), "elements per load (16-byte packs when > 1)",
                  (Role.VECTOR,)),
            Token("unroll", (1, 2, 4), "packs in flight per thread per step", (Role.UNROLL,)),
        ]
        checks = _common_space_checks(p, arch, lambda pt: pt["threads"], lambda pt: _words_per_pack(p, pt))
        return DesignSpace(tokens, checks)

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        p = _plan(problem)
        vec = fitting_vec(p.view.reduced_int, p.vec_width())
        rows = hint_int(problem.program, p.view.outer_dims)
        row = hint_int(problem.program, p.view.reduced_dims)
        # About four resident waves of 256-thread blocks over all rows, each >= 4 packs/thread.
        want_blocks = 4 * arch.sms * (arch.max_threads_per_sm // 256)
        chunks = 2
        for c in self.space(problem, arch).token("chunks").choices:
            if rows * c <= want_blocks and row // (c * 256 * vec) >= 4:
                chunks = c
        unroll = 4 if row // chunks >= 256 * vec * 8 else 2
        point = {"threads": 256, "chunks": chunks, "vec": vec, "unroll": unroll}
        return shrink_unroll(self.space(problem, arch), point)

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        p = _plan(problem)
        threads, chunks, vec, unroll = (point[k] for k in ("threads", "chunks", "vec", "unroll"))
        accesses = p.accesses(vec)
        params = launcher_params(problem)
        signature = ", ".join(kernel_param_list(params))
        kernel, merge = f"{name}_kernel", f"{name}_merge_kernel"
        acc_t = p.reducer.acc_type
        raw = {a.name: pack_element(a, "slot", "elem", "pack * kVec + elem") for a in accesses}
        raw_scalar = {a.name: scalar_element(a, "row_start + col") for a in accesses}
        fold = chunk_loops(accesses, unroll, p.fold_code(raw, "pack * kVec - row_start + elem"),
                           p.fold_code(raw_scalar, "col"))
        device = f"""\
constexpr int kThreads = {threads};
constexpr int kMinBlocks = {min_blocks_per_sm(arch, threads)};  // per SM, for ptxas's register budget
constexpr int kChunks = {chunks};    // stage-1 blocks per row
constexpr int kVec = {vec};
constexpr int kUnroll = {unroll};    // packs in flight per thread per step
constexpr int kMergeThreads = 256;

{_common_device_code(p, shuffles=True)}

{_strategy_header(p)}
// Stage 1: block (row, chunk) reduces a kVec-aligned slice of the row into one partial.
__global__ void __launch_bounds__(kThreads, kMinBlocks)
{kernel}({signature}, bool packed, {acc_t}* __restrict__ partials) {{
    __shared__ {acc_t} warp_partials[kThreads / 32];
{SPLIT_ROW_PROLOGUE.format(row_len=p.view.reduced)}
    {acc_t} acc = {p.reducer.identity};
{indent(fold, 4)}
    acc = group_reduce<kThreads>(acc, Combine(), warp_partials);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}}

// Stage 2: one block per row merges its kChunks partials in a fixed order.
__global__ void __launch_bounds__(kMergeThreads) {merge}({signature}, const {acc_t}* __restrict__ partials) {{
    __shared__ {acc_t} warp_partials[kMergeThreads / 32];
    const long long row_len = {p.view.reduced};
    const long long row = blockIdx.x;
    {acc_t} acc = {p.reducer.identity};
    for (int chunk = threadIdx.x; chunk < kChunks; chunk += kMergeThreads)
        acc = Combine()(acc, partials[row * kChunks + chunk]);
    acc = group_reduce<kMergeThreads>(acc, Combine(), warp_partials);
    if (threadIdx.x == 0) {{
{indent(p.result_code("acc", "row"), 8)}
    }}
    (void)row_len;
}}

{workspace_code(acc_t)}"""
        acc_host = p.reducer.host_type
        names = [q.name for q in params]
        launcher = f"""\
{launcher_opening(name, params, {"rows": p.view.outer}, "rows == 0")}
    const bool packed = {_packed_check(p, vec, p.view.reduced)};
    {acc_host}* partials = kn::workspace(rows * kn::kChunks);
    if (partials == nullptr) return;
    const unsigned grid = (unsigned)(rows * kn::kChunks);
    kn::{kernel}<<<grid, kn::kThreads, 0, stream>>>({", ".join(names + ["packed", "partials"])});
    kn::{merge}<<<(unsigned)rows, kn::kMergeThreads, 0, stream>>>({", ".join(names + ["partials"])});
}}"""
        strategy = (f"{p.op} in two stages: {chunks} blocks of {threads} threads per row write "
                    f"partials, a merge kernel combines them in order; {vec}-element loads, "
                    f"{unroll} in flight")
        rows_hint = hint_int(problem.program, p.view.outer_dims)
        smem = (threads // 32) * 4 * p.acc_words()
        launches = [Launch(kernel, (rows_hint * chunks, 1, 1), (threads, 1, 1), smem),
                    Launch(merge, (rows_hint, 1, 1), (256, 1, 1), 8 * 4 * p.acc_words())]
        return rendered_kernel(self.name, point, name, strategy, device, launcher, params, launches)


# ---------------------------------------------------------------------------------------------

def _plan(problem: Problem) -> ReductionPlan:
    return accepted(plan(problem))


def _column_plan(problem: Problem) -> ReductionPlan:
    return accepted(plan(problem, COLUMN_LONG_REDUCTION))


SKETCHES: list[Sketch] = [RowReduction(), ColumnReduction(), SplitRowReduction()]

SAMPLE_INTENTS: list[str] = [
    "s = sum(x, dim=1); x: f32[16384, 16384]",
    "s = sum(x, dim=0); x: f32[16384, 16384]",
    "s = mean(x, dim=1, keepdim=True); x: bf16[N, 1000]; N=777",
    "s = sqrt(mean(x * x, dim=-1)); x: f16[4096, 4096]",
    "s = max(x, dim=1); x: f32[513, 77]",
    "i = argmax(x, dim=1); x: f32[1000, 333]",
    "i = argmin(x, dim=0); x: f16[1000, 37]",
    "s = sum(x); x: f32[67108864]",
    "s = prod(x, dim=(1, 2)); x: f64[64, 16, 3]",
    "s = min(x, dim=1); x: i32[300, 200, 50]",
    "s = sum(x > 0, dim=1); x: f32[M, K]",
    "s = sum(x * w, dim=1); x: f32[512, 1024]; w: f32[1024]",
    "s = mean(x - c, dim=2); x: f32[8, 64, 100]; c: f32[8, 64, 1]",
    "s = sum(x, dim=1); x: f32[16, 4194304]",
    "s = mean(x, dim=0); x: f32[131072, 64]",
]
