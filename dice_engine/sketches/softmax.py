"""softmax / log_softmax along any axis, viewed as [outer, reduced, inner].

- `softmax.rows` (the innermost axis): a group of G threads per row (sub-warp, warp or block).
  cache=registers keeps the whole row in registers (one read, one write: the row must fit, its
  length known); otherwise an online pass keeps the running max and the sum of exponentials
  together and a second pass writes, rereading the row from a shared-memory row cache filled by
  the first pass (cache=shared: one read) or from global memory (cache=none: any length,
  symbolic too).
- `softmax.split_rows` (the innermost axis, few long rows): `chunks` blocks per row; a stats
  kernel writes each chunk's running max/sum, a write kernel merges a row's partials in a fixed
  order and writes its chunk (no atomics: bitwise reproducible).
- `softmax.columns` (a non-innermost axis): threads along the kept inner axis (coalesced), a
  few along the softmax axis; online max/sum per column merged in shared memory in a fixed
  order, then a second pass writes.

Math runs in float (double for f64) with expf/logf (not the fast intrinsics).
"""
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .access import (chunk_loops, fitting_vec, hint_int, pack_declarations, pack_element, pack_loads,
                     pack_step, scalar_element, vec_violation)
from .base import DesignSpace, Launch, Point, RenderedKernel, Sketch, accepted, launcher_params
from .columns import COLUMN_INDEX, COLUMN_TILES, column_partials, column_tile, column_tiles, column_tokens
from .fusion import axis_unsupported, describe, kernel_param_list
from .rowwise import (ChunkStats, RowwisePlan, packs_per_thread, registers_write_code, row_group, row_space,
                      row_vec, rows_rendered, rowwise_plan, split_row_default, split_row_space,
                      split_rows_rendered, two_pass_body)
from .warp import (PACK_HELPERS, SHUFFLE_HELPERS, block_threads_violation, indent, launcher_opening,
                   min_blocks_per_sm, partials_smem_bytes, register_budget, rendered_kernel)

BASE_REGISTERS = 32


# Identifiers the kernels below declare (a tensor or symbol must not shadow them).
LOCALS = frozenset("""
    rows row_len lane row0 row active row_start vals reg_pack col0 col val row_max row_sum inv_sum
    log_sum stats scalar_from first_pack pack_end next_pack slot pack elem out_pack column_stats
    warp_partials inner outer tiles_per_outer outer_idx j0 base red total part tiles row_cache
    row_cache_bytes cached smem_bytes opted_in chunk chunk_len begin end partials
""".split())


def _plan(problem: Problem) -> RowwisePlan | str:
    anchor = problem.anchor
    if anchor is None or anchor.op not in ("softmax", "log_softmax"):
        return "not a softmax"
    return rowwise_plan(problem, [anchor.attr("dim")])


def _must_plan(problem: Problem) -> RowwisePlan:
    return accepted(_plan(problem))


def _math(ctype: str) -> dict[str, str]:
    f = "f" if ctype == "float" else ""
    return {"exp": f"exp{f}", "log": f"log{f}", "max": f"fmax{f}", "one": "1.0f" if f else "1.0",
            "zero": "0.0f" if f else "0.0"}


def _online_code(ctype: str) -> str:
    m = _math(ctype)
    return f"""\
// A running softmax denominator: the largest value seen and the sum of exp(value - max).
struct MaxSum {{
    {ctype} max;
    {ctype} sum;
}};

// Adds one value to a running MaxSum with a single exponential.
__device__ __forceinline__ void online_add(MaxSum& acc, {ctype} v) {{
    if (v > acc.max) {{
        acc.sum = acc.sum * {m['exp']}(acc.max - v) + {m['one']};
        acc.max = v;
    }} else if (v != -INFINITY) {{   // -inf adds nothing (and -inf - -inf would be NaN)
        acc.sum += {m['exp']}(v - acc.max);
    }}
}}

// Merges two running MaxSums (fixed operand order: deterministic).
struct MergeMaxSum {{
    __device__ __forceinline__ MaxSum operator()(MaxSum a, MaxSum b) const {{
        const {ctype} top = {m['max']}(a.max, b.max);
        if (top == -INFINITY) return MaxSum{{top, {m['zero']}}};
        return MaxSum{{top, a.sum * {m['exp']}(a.max - top) + b.sum * {m['exp']}(b.max - top)}};
    }}
}};"""


def _ops_code(ctype: str) -> str:
    m = _math(ctype)
    return f"""\
struct MaxOp {{
    __device__ __forceinline__ {ctype} operator()({ctype} a, {ctype} b) const {{ return {m['max']}(a, b); }}
}};

struct SumOp {{
    __device__ __forceinline__ {ctype} operator()({ctype} a, {ctype} b) const {{ return a + b; }}
}};"""


def _result(p: RowwisePlan, v: str, stats: str, per_column: str = "") -> str:
    """The operator's value for argument value `v` given the row's max and sum (`stats`) and
    the finished `log_sum` or `inv_sum` (indexed by `per_column` when per column)."""
    m = _math(p.ctype)
    if p.anchor.op == "log_softmax":
        return f"{v} - {stats}.max - log_sum{per_column}"
    return f"{m['exp']}({v} - {stats}.max) * inv_sum{per_column}"


def _finish_stats(p: RowwisePlan, stats: str) -> str:
    m = _math(p.ctype)
    if p.anchor.op == "log_softmax":
        return f"const {p.ctype} log_sum = {m['log']}({stats}.sum);"
    return f"const {p.ctype} inv_sum = {m['one']} / {stats}.sum;"


# ---------------------------------------------------------------------------------------------
# softmax.rows

class RowSoftmax(Sketch):
    name = "softmax.rows"
    pattern = "softmax"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return axis_unsupported(problem, LOCALS, _plan, last_axis=True,
                                otherwise="the softmax axis is not the innermost (rows sketch)")

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        p = _must_plan(problem)
        # the streaming passes keep the running max and sum
        return row_space(p, arch, vec_width=p.vec_width(), base_registers=BASE_REGISTERS,
                         stream_state_values=2)

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        p = _must_plan(problem)
        vec = row_vec(p, p.vec_width())
        # about 32 values per thread: 8 packs of 4 floats, 4 packs of 8 halves
        group = row_group(p.problem.program, p.view, arch, vec, max_packs=32 // max(vec, 4))
        space = self.space(problem, arch)
        point = {"group": group, "threads": max(256, group), "vec": vec, "cache": "registers", "unroll": 1}
        if not space.is_legal(point):
            point.update(cache="shared", unroll=2)
        if not space.is_legal(point):
            point.update(cache="none", unroll=2)
        if not space.is_legal(point):
            point.update(unroll=1)
        if not space.is_legal(point):
            point.update(vec=1)
        return point

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        p = _must_plan(problem)
        registers = point["cache"] == "registers"
        body = (self._registers_body(p, point) if registers
                else self._streaming_body(p, point, cached=point["cache"] == "shared"))
        constants = (f"constexpr int kPacks = {packs_per_thread(p, point)};   "
                     "// packs per thread: the whole row in registers\n"
                     if registers else
                     f"constexpr int kUnroll = {point['unroll']};   // packs in flight per step\n")
        how = {"registers": "row cached in registers (one read)",
               "shared": "row cached in shared memory by the online max/sum pass, then written",
               "none": "online max/sum pass + write pass"}[point["cache"]]
        return rows_rendered(
            self.name, p, arch, point, name, launcher_params(problem), constants=constants,
            helpers=[PACK_HELPERS, SHUFFLE_HELPERS,
                     _ops_code(p.ctype) if registers else _online_code(p.ctype)],
            operation="; kGroup threads per row.", partial_type=p.ctype if registers else "MaxSum",
            partial_words=1 if registers else 2, body=body,
            packed_check=p.packed_check(point["vec"], p.view.reduced), how=how)

    def _registers_body(self, p: RowwisePlan, point: Point) -> str:
        m = _math(p.ctype)
        accesses = p.accesses(point["vec"])
        raw_pack = {a.name: pack_element(a, "0", "elem", "pack * kVec + elem") for a in accesses}
        raw_scalar = {a.name: scalar_element(a, "row_start + col") for a in accesses}
        decl = "\n".join(pack_declarations(accesses, "1"))
        loads = "\n".join(pack_loads(accesses, "pack", "0"))
        partials = "warp_partials" if point["group"] > 32 else f"({p.ctype}*)nullptr"
        shift = "vals[reg_pack][elem] -= row_max;" if p.anchor.op == "log_softmax" else ""
        sum_term = (f"row_sum += {m['exp']}(vals[reg_pack][elem]);" if p.anchor.op == "log_softmax"
                    else f"vals[reg_pack][elem] = {m['exp']}(vals[reg_pack][elem] - row_max);\n"
                         "        row_sum += vals[reg_pack][elem];")
        final = "vals[reg_pack][elem] " + ("- log_sum" if p.anchor.op == "log_softmax" else "* inv_sum")
        finish = (f"const {p.ctype} log_sum = {m['log']}(row_sum);" if p.anchor.op == "log_softmax"
                  else f"const {p.ctype} inv_sum = {m['one']} / row_sum;")
        return f"""\
// The row's values (prologue applied) in registers; -inf past its end adds nothing.
{p.ctype} vals[kPacks][kVec];
#pragma unroll
for (int reg_pack = 0; reg_pack < kPacks; ++reg_pack) {{
    const long long col0 = ((long long)reg_pack * kGroup + lane) * kVec;
    if (packed && active && col0 < row_len) {{   // row_len % kVec == 0: the whole pack is in the row
        const long long pack = (row_start + col0) / kVec;
{indent(decl, 8)}
{indent(loads, 8)}
#pragma unroll
        for (int elem = 0; elem < kVec; ++elem) {{
{indent(p.value_code(raw_pack, "val"), 12)}
            vals[reg_pack][elem] = val;
        }}
    }} else {{
#pragma unroll
        for (int elem = 0; elem < kVec; ++elem) {{
            const long long col = col0 + elem;
            vals[reg_pack][elem] = -INFINITY;
            if (active && col < row_len) {{
{indent(p.value_code(raw_scalar, "val"), 16)}
                vals[reg_pack][elem] = val;
            }}
        }}
    }}
}}
{p.ctype} row_max = -INFINITY;
#pragma unroll
for (int reg_pack = 0; reg_pack < kPacks; ++reg_pack)
#pragma unroll
    for (int elem = 0; elem < kVec; ++elem) row_max = {m['max']}(row_max, vals[reg_pack][elem]);
row_max = group_reduce<kGroup>(row_max, MaxOp(), {partials});
{p.ctype} row_sum = {m['zero']};
#pragma unroll
for (int reg_pack = 0; reg_pack < kPacks; ++reg_pack)
#pragma unroll
    for (int elem = 0; elem < kVec; ++elem) {{
        {shift}
        {sum_term}
    }}
row_sum = group_reduce<kGroup>(row_sum, SumOp(), {partials});
{finish}
{registers_write_code(p, final, final)}"""

    def _streaming_body(self, p: RowwisePlan, point: Point, cached: bool) -> str:
        accesses = p.accesses(point["vec"])
        raw = {a.name: pack_element(a, "slot", "elem", "pack * kVec + elem") for a in accesses}
        ct = p.ctype
        keep_value = "\ncached.v[elem] = val;" if cached else ""
        fold = p.value_code(raw, "val") + keep_value + "\nonline_add(stats, val);"
        # 16-byte pack stores and loads keep the row cache free of bank conflicts.
        keep = {}
        if cached:
            keep = dict(before_elements=f"Pack<{ct}, kVec> cached;",
                        after_elements=f"store_pack<{ct}, kVec>(row_cache, pack - first_pack, cached);")
        step = pack_step(accesses, point["unroll"], "next_pack + slot * kGroup", fold, **keep)
        tail = pack_step(accesses, 1, "next_pack", fold, **keep)
        value = _result(p, "val", "stats")
        partials = "warp_partials" if point["group"] > 32 else "(MaxSum*)nullptr"
        return two_pass_body(
            p, point, cached, pass1="running max and sum of exponentials over the row (one read).",
            init="MaxSum stats = {-INFINITY, 0};", step=step, tail=tail,
            scalar_fold="online_add(stats, val);",
            finish=f"stats = group_reduce<kGroup>(stats, MergeMaxSum(), {partials});\n"
                   + _finish_stats(p, "stats"),
            pass2=" and write the result.", packed_value=value, scalar_value=value)


def _stat_bytes(p: RowwisePlan) -> int:
    """Bytes of one MaxSum (a max and a sum in the compute type)."""
    return 8 if p.ctype == "float" else 16


# ---------------------------------------------------------------------------------------------
# softmax.columns

class ColumnSoftmax(Sketch):
    name = "softmax.columns"
    pattern = "softmax"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return axis_unsupported(problem, LOCALS, _plan, last_axis=False,
                                otherwise="the softmax axis is the innermost (use softmax.rows)")

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        p = _must_plan(problem)
        tokens = column_tokens(p.vec_width(), "threads along the softmax axis")
        stat_bytes = _stat_bytes(p)

        def fits(pt: Point) -> str | None:
            threads = pt["tile"] * pt["split"]
            bad_threads = block_threads_violation(arch, threads)
            if bad_threads:
                return bad_threads
            smem = partials_smem_bytes(pt["split"], pt["tile"], pt["vec"], stat_bytes)
            if smem > arch.smem_per_block_default:
                return f"{smem} bytes of shared memory exceed {arch.smem_per_block_default}"
            bad_vec = vec_violation("inner extent", p.view.inner_int, pt["vec"])
            if bad_vec:
                return bad_vec
            need = BASE_REGISTERS + pt["vec"] * (stat_bytes // 4 + 2)
            if need > register_budget(arch, threads):
                return f"~{need} registers per thread needed"
            return None

        return DesignSpace(tokens, [fits])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        p = _must_plan(problem)
        vec = fitting_vec(p.view.inner_int, p.vec_width())
        inner = hint_int(problem.program, p.view.inner_dims)
        outer = hint_int(problem.program, p.view.outer_dims)
        reduced = hint_int(problem.program, p.view.reduced_dims)
        tile = column_tile(inner, vec)
        columns = outer * -(-inner // vec)
        split = 1
        while (split < 32 and tile * split < 1024 and columns * split < 2 * arch.sms * arch.max_threads_per_sm
               and reduced // (2 * split) >= 8):
            split *= 2
        point = {"tile": tile, "split": split, "vec": vec}
        space = self.space(problem, arch)
        while not space.is_legal(point) and point["split"] > 1:
            point["split"] //= 2
        while not space.is_legal(point) and point["tile"] < 32:
            point["tile"] *= 2
        return point

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        p = _must_plan(problem)
        tile, split, vec = point["tile"], point["split"], point["vec"]
        stat_bytes = _stat_bytes(p)
        threads = tile * split
        params = launcher_params(problem)
        kernel = f"{name}_kernel"
        accesses = p.accesses(vec)
        out_name, out_t = problem.program.output_name, problem.output.dtype.c_type
        raw = {a.name: pack_element(a, "slot", "elem", "pack * kVec + elem") for a in accesses}
        raw_scalar = {a.name: scalar_element(a, "base + red * inner + elem") for a in accesses}
        fold = p.value_code(raw, "val") + "\nonline_add(stats[elem], val);"
        read_step = pack_step(accesses, 1, "(base + red * inner) / kVec", fold)
        value = _result(p, "val", "stats[elem]", per_column="[elem]")
        write_elem = (p.value_code(raw, "val") + "\n" +
                      p.store_code(value, "pack * kVec + elem", "out_pack.v[elem]"))
        write_step = pack_step(accesses, 1, "(base + red * inner) / kVec", write_elem,
                               before_elements=f"Pack<{out_t}, kVec> out_pack;",
                               after_elements=f"store_pack<{out_t}, kVec>({out_name}, pack, out_pack);")
        m = _math(p.ctype)
        finish = (f"log_sum[elem] = {m['log']}(stats[elem].sum);" if p.anchor.op == "log_softmax"
                  else f"inv_sum[elem] = {m['one']} / stats[elem].sum;")
        per_elem_const = "log_sum" if p.anchor.op == "log_softmax" else "inv_sum"
        write_elem_scalar = (p.value_code(raw_scalar, "val") + "\n" +
                             p.store_code(value, "base + red * inner + elem",
                                          f"{out_name}[base + red * inner + elem]"))
        device = f"""\
constexpr int kTile = {tile};     // threads along the inner axis, kVec adjacent columns each
constexpr int kSplit = {split};    // threads along the softmax axis
constexpr int kThreads = kTile * kSplit;
constexpr int kMinBlocks = {min_blocks_per_sm(arch, threads)};  // per SM, for ptxas's register budget
constexpr int kVec = {vec};

{PACK_HELPERS}

{_online_code(p.ctype)}

// {describe(problem)}
// {p.anchor.op} along a non-innermost axis: [outer={p.view.outer}, softmax={p.view.reduced},
// inner={p.view.inner}].
// Each thread walks the softmax axis of kVec adjacent columns (coalesced across threadIdx.x);
// the kSplit running max/sums of a column merge in shared memory in a fixed order.
__global__ void __launch_bounds__(kThreads, kMinBlocks)
{kernel}({", ".join(kernel_param_list(params))}, bool packed) {{
{column_partials("MaxSum", "column_stats", tile, vec, stat_bytes)}
    const long long row_len = {p.view.reduced};
    const long long inner = {p.view.inner};
{COLUMN_INDEX}
    // Element (outer_idx, red, j0) sits at base + red * inner.
    const long long base = outer_idx * row_len * inner + j0;
    const bool active = j0 < inner;
    MaxSum stats[kVec];
#pragma unroll
    for (int elem = 0; elem < kVec; ++elem) stats[elem] = MaxSum{{-INFINITY, 0}};
    if (active) {{
        #pragma unroll 1
        for (long long red = threadIdx.y; red < row_len; red += kSplit) {{
            if (packed) {{   // inner % kVec == 0 and the packed pointers are 16-byte aligned
{indent(read_step, 16)}
            }} else {{
#pragma unroll
                for (int elem = 0; elem < kVec; ++elem) {{
                    if (j0 + elem < inner) {{
{indent(p.value_code(raw_scalar, "val"), 24)}
                        online_add(stats[elem], val);
                    }}
                }}
            }}
        }}
    }}
#pragma unroll
    for (int elem = 0; elem < kVec; ++elem)
        column_stats[threadIdx.y][elem * kTile + threadIdx.x] = stats[elem];
    __syncthreads();
    if (threadIdx.y == 0) {{
#pragma unroll
        for (int elem = 0; elem < kVec; ++elem) {{
            MaxSum total = column_stats[0][elem * kTile + threadIdx.x];
            for (int part = 1; part < kSplit; ++part)
                total = MergeMaxSum()(total, column_stats[part][elem * kTile + threadIdx.x]);
            column_stats[0][elem * kTile + threadIdx.x] = total;
        }}
    }}
    __syncthreads();
    {p.ctype} {per_elem_const}[kVec];
#pragma unroll
    for (int elem = 0; elem < kVec; ++elem) {{
        stats[elem] = column_stats[0][elem * kTile + threadIdx.x];
        {finish}
    }}
    if (!active) return;   // no barrier follows
    #pragma unroll 1
    for (long long red = threadIdx.y; red < row_len; red += kSplit) {{
        if (packed) {{
{indent(write_step, 12)}
        }} else {{
#pragma unroll
            for (int elem = 0; elem < kVec; ++elem) {{
                if (j0 + elem < inner) {{
{indent(write_elem_scalar, 20)}
                }}
            }}
        }}
    }}
}}"""
        launcher = f"""\
{launcher_opening(name, params, {"outer": p.view.outer, "inner": p.view.inner}, "outer * inner == 0")}
    const bool packed = {p.packed_check(vec, "inner")};
    {COLUMN_TILES}
    const dim3 grid((unsigned)tiles), block(kn::kTile, kn::kSplit);
    kn::{kernel}<<<grid, block, 0, stream>>>({", ".join([q.name for q in params] + ["packed"])});
}}"""
        strategy = (f"{p.anchor.op} along a non-innermost axis: {tile}x{split} threads "
                    "(inner x softmax axis), "
                    f"{vec} columns per thread, online max/sum then a write pass")
        inner_hint = hint_int(problem.program, p.view.inner_dims)
        outer_hint = hint_int(problem.program, p.view.outer_dims)
        tiles = column_tiles(outer_hint, inner_hint, tile, vec)
        launch = Launch(kernel, (tiles, 1, 1), (tile, split, 1),
                        partials_smem_bytes(split, tile, vec, stat_bytes))
        return rendered_kernel(self.name, point, name, strategy, device, launcher, params, [launch])


# ---------------------------------------------------------------------------------------------
# softmax.split_rows

class SplitRowSoftmax(Sketch):
    """Few long rows: `chunks` blocks per row. A stats kernel writes each chunk's running
    max/sum; a write kernel merges the row's partials (same fixed order in every block) and
    writes its chunk, rereading it."""
    name = "softmax.split_rows"
    pattern = "softmax"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return axis_unsupported(problem, LOCALS, _plan, last_axis=True,
                                otherwise="the softmax axis is not the innermost (split-rows sketch)")

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        p = _must_plan(problem)
        return split_row_space(p, arch, vec_width=p.vec_width(), base_registers=BASE_REGISTERS,
                               state_registers=lambda pt: 4)

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        p = _must_plan(problem)
        return split_row_default(p, arch, self.space(problem, arch), p.vec_width())

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        p = _must_plan(problem)
        vec, unroll = point["vec"], point["unroll"]
        params = launcher_params(problem)
        accesses = p.accesses(vec)
        out_name, out_t = problem.program.output_name, problem.output.dtype.c_type
        raw = {a.name: pack_element(a, "slot", "elem", "pack * kVec + elem") for a in accesses}
        raw_scalar = {a.name: scalar_element(a, "row_start + col") for a in accesses}
        gather = chunk_loops(accesses, unroll, p.value_code(raw, "val") + "\nonline_add(stats, val);",
                             p.value_code(raw_scalar, "val") + "\nonline_add(stats, val);")
        value = _result(p, "val", "stats")
        write = chunk_loops(
            accesses, unroll,
            p.value_code(raw, "val") + "\n" + p.store_code(value, "pack * kVec + elem", "out_pack.v[elem]"),
            p.value_code(raw_scalar, "val") + "\n" +
            p.store_code(value, "row_start + col", f"{out_name}[row_start + col]"),
            before_elements=f"Pack<{out_t}, kVec> out_pack;",
            after_elements=f"store_pack<{out_t}, kVec>({out_name}, pack, out_pack);")
        stats = ChunkStats("MaxSum", 2, "{-INFINITY, 0}", "MergeMaxSum()",
                           "running max and sum of exponentials")
        return split_rows_rendered(
            self.name, p, arch, point, name, params, constants="",
            helpers="\n\n".join([PACK_HELPERS, SHUFFLE_HELPERS, _online_code(p.ctype)]), stats=stats,
            gather=gather, finish=_finish_stats(p, "stats"), write=write, writes=" and writes the result",
            packed_check=p.packed_check(vec, p.view.reduced),
            kernels=" (online max/sum per chunk) and a write kernel")


SKETCHES: list[Sketch] = [RowSoftmax(), ColumnSoftmax(), SplitRowSoftmax()]

SAMPLE_INTENTS: list[str] = [
    "y = softmax(x, dim=1); x: f32[16384, 16384]",
    "y = softmax(x, dim=1); x: f32[4096, 1024]",
    "y = softmax(x, dim=-1); x: f16[N, 1000]; N=777",
    "y = log_softmax(x, dim=1); x: bf16[333, 4099]",
    "y = softmax(x * 0.125, dim=-1); x: f32[8, 12, 197, 197]",
    "y = softmax(x, dim=1); x: f32[B, K]",
    "y = softmax(x, dim=0); x: f32[1000, 512]",
    "y = log_softmax(x, dim=1); x: f64[32, 100, 7]",
    "y = softmax(x, dim=1); x: f32[64, 262144]",
    "y = softmax(x + m, dim=-1); x: f32[64, 128, 128]; m: f32[128, 128]",
]
