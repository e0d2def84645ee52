"""layer_norm / rms_norm over the last axis: `norm.rows`, and `norm.split_rows` for few long
rows (`chunks` blocks per row: a stats kernel, then a write kernel that merges the row's
partials in a fixed order and normalizes its chunk).

In `norm.rows`, a group of G threads per row (sub-warp, warp or block). cache=registers keeps the row in
registers and computes mean and variance in two passes over them (exact and stable: no
E[x^2] - E[x]^2). Otherwise a statistics pass (Welford's running mean/M2 per 16-byte pack,
merged with Chan's formula in a fixed order; a sum of squares for rms_norm) is followed by a
normalize-and-write pass that rereads the row from a shared-memory row cache filled by the
first pass (cache=shared: one read from memory) or from global memory (cache=none: any length,
symbolic too). Optional weight and bias are read as 16-byte packs along the row. rms_norm's
eps=None is torch's default, finfo(dtype).eps.
"""
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.graph import Node
from ..ir.patterns import Problem
from .access import (chunk_loops, pack_element, pack_loads, pack_step,
                     scalar_element)
from .base import (DesignSpace, Point, RenderedKernel, Sketch, accepted, launcher_params)
from .expr import literal
from .fusion import axis_unsupported, leaf_value
from .rowwise import (ChunkStats, RowwisePlan, packs_per_thread, registers_write_code, row_group, row_space,
                      row_vec, rows_rendered, rowwise_plan, split_row_default, split_row_space,
                      split_rows_rendered, two_pass_body)
from .warp import (PACK_HELPERS, SHUFFLE_HELPERS, indent)

BASE_REGISTERS = 40      # indices, statistics, weight/bias packs
FINFO_EPS = {"f64": 2.220446049250313e-16, "f32": 1.1920928955078125e-07,
             "f16": 0.0009765625, "bf16": 0.0078125}


# Identifiers the kernels below declare (a tensor or symbol must not shadow them).
LOCALS = frozenset("""
    rows row_len lane row0 row active row_start vals reg_pack col0 col val total mean squares rstd
    d chunk stats scalar_from first_pack pack_end next_pack slot pack elem out_pack warp_partials
    row_cache row_cache_bytes cached smem_bytes opted_in chunk_len begin end partials
""".split())


def _plan(problem: Problem) -> RowwisePlan | str:
    anchor = problem.anchor
    if anchor is None or anchor.op not in ("layer_norm", "rms_norm"):
        return "not a layer_norm or rms_norm"
    if any(a.op != "input" for a in anchor.args[1:]):
        return "weight and bias must be input tensors"
    return rowwise_plan(problem, [anchor.args[0].rank - 1])


def _must_plan(problem: Problem) -> RowwisePlan:
    return accepted(_plan(problem))


def _affine(p: RowwisePlan) -> tuple[Node | None, Node | None]:
    """The weight and bias inputs (None where absent)."""
    args = p.anchor.args
    weight = args[1] if len(args) > 1 else None
    bias = args[2] if len(args) > 2 and p.anchor.op == "layer_norm" else None
    return weight, bias


def _vec_width(p: RowwisePlan) -> int:
    """Elements per 16-byte pack of the widest tensor read or written along the row."""
    weight, bias = _affine(p)
    extra = [n.dtype for n in (weight, bias) if n is not None]
    return min([p.vec_width()] + [16 // d.size for d in extra])


def _eps(p: RowwisePlan) -> float:
    eps = p.anchor.attr("eps")
    return FINFO_EPS[p.anchor.dtype.name] if eps is None else float(eps)


class RowNorm(Sketch):
    name = "norm.rows"
    pattern = "norm"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return axis_unsupported(problem, LOCALS, _plan)

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        p = _must_plan(problem)
        # the streaming passes keep Welford's count, mean and M2
        return row_space(p, arch, vec_width=_vec_width(p), base_registers=BASE_REGISTERS,
                         stream_state_values=3)

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        p = _must_plan(problem)
        vec = row_vec(p, _vec_width(p))
        group = row_group(p.problem.program, p.view, arch, vec, max_packs=4)
        space = self.space(problem, arch)
        in_registers = {"group": group, "threads": max(256, group), "vec": vec, "cache": "registers",
                        "unroll": 1}
        # A row that needs a whole 1024-thread block in registers leaves one block per SM, idle
        # while it reduces: caching it in shared memory keeps two or more blocks per SM.
        # Four 16-byte packs in flight for 2-byte types (H200, bf16 8192-wide rows: 45 µs against
        # 48.5 µs with two; f16/bf16 rows in registers were slower still, 54 µs).
        in_shared = dict(in_registers, group=min(group, 512), threads=max(256, min(group, 512)),
                         cache="shared", unroll=4 if vec >= 8 else 2)
        candidates = [in_shared, in_registers] if group > 512 else [in_registers, in_shared]
        candidates += [dict(in_registers, cache="none", unroll=2), dict(in_registers, cache="none", unroll=1),
                       dict(in_registers, cache="none", unroll=1, vec=1)]
        return next((c for c in candidates if space.is_legal(c)), candidates[-1])

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        p = _must_plan(problem)
        registers = point["cache"] == "registers"
        weight, bias = _affine(p)
        body = (self._registers_body(p, point) if registers
                else self._streaming_body(p, point, cached=point["cache"] == "shared"))
        partial_t = p.ctype if registers or p.anchor.op == "rms_norm" else "Welford"
        per_thread = (f"constexpr int kPacks = {packs_per_thread(p, point)};   "
                      "// packs per thread: the whole row in registers"
                      if registers else
                      f"constexpr int kUnroll = {point['unroll']};   // packs in flight per thread per step")
        helpers = [PACK_HELPERS, SHUFFLE_HELPERS, _sum_code(p.ctype)]
        if not registers and p.anchor.op == "layer_norm":
            helpers.append(_welford_code(p.ctype))
        affine = " * weight" + (" + bias" if bias is not None else "") if weight is not None else ""
        formula = ("(x - mean) * rsqrt(var + eps)" if p.anchor.op == "layer_norm"
                   else "x * rsqrt(mean(x^2) + eps)") + affine
        vec = point["vec"]
        packed = p.packed_check(vec, p.view.reduced)
        if vec > 1:
            for n in (weight, bias):
                if n is not None:
                    packed += f" && reinterpret_cast<uintptr_t>({n.name}) % 16 == 0"
        how = {"registers": "row cached in registers, two-pass mean/variance",
               "shared": "row cached in shared memory by the statistics pass, then normalized",
               "none": "statistics pass + normalize pass (the row read twice)"}[point["cache"]]
        return rows_rendered(
            self.name, p, arch, point, name, launcher_params(problem),
            constants=f"{per_thread}\nconstexpr {p.ctype} kEps = {literal(_eps(p), p.ctype)};\n",
            helpers=helpers, operation=f": y = {formula}.", partial_type=partial_t,
            partial_words=3 if partial_t == "Welford" else 1, body=body, packed_check=packed, how=how)

    # -- the two bodies ---------------------------------------------------------------------------

    def _stats_code(self, p: RowwisePlan, partials: str) -> str:
        """Mean and rstd from the registers (two passes over them: exact and stable)."""
        zero = literal(0.0, p.ctype)
        rsqrt = "rsqrtf" if p.ctype == "float" else "rsqrt"
        loop = ("#pragma unroll\nfor (int reg_pack = 0; reg_pack < kPacks; ++reg_pack)\n"
                "#pragma unroll\n    for (int elem = 0; elem < kVec; ++elem)")
        valid = "((long long)reg_pack * kGroup + lane) * kVec + elem < row_len"
        if p.anchor.op == "rms_norm":
            return f"""\
{p.ctype} squares = {zero};
{loop} squares += vals[reg_pack][elem] * vals[reg_pack][elem];   // zeros past the row add nothing
squares = group_reduce<kGroup>(squares, SumOp(), {partials});
const {p.ctype} rstd = {rsqrt}(squares / ({p.ctype})row_len + kEps);"""
        return f"""\
{p.ctype} total = {zero};
{loop} total += vals[reg_pack][elem];   // zeros past the row add nothing
total = group_reduce<kGroup>(total, SumOp(), {partials});
const {p.ctype} mean = total / ({p.ctype})row_len;
{p.ctype} squares = {zero};
{loop} {{
        const {p.ctype} d = vals[reg_pack][elem] - mean;
        if ({valid}) squares += d * d;
    }}
squares = group_reduce<kGroup>(squares, SumOp(), {partials});
const {p.ctype} rstd = {rsqrt}(squares / ({p.ctype})row_len + kEps);"""

    def _registers_body(self, p: RowwisePlan, point: Point) -> str:
        accesses = p.accesses(point["vec"])
        raw_pack = {a.name: pack_element(a, "0", "elem", "pack * kVec + elem") for a in accesses}
        raw_scalar = {a.name: scalar_element(a, "row_start + col") for a in accesses}
        decl = [f"Pack<{a.c_type}, kVec> {a.name}_pack[1];" if a.packed else f"{a.c_type} {a.name}_first[1];"
                for a in accesses if a.kind != "gather"]
        loads = pack_loads(accesses, "pack", "0")
        partials = "warp_partials" if point["group"] > 32 else f"({p.ctype}*)nullptr"
        zero = literal(0.0, p.ctype)
        w_pack, b_pack = _affine_raw(p, True, "")
        w_col, b_col = _affine_raw(p, False, "col")
        packed_value = _normalized(p, "vals[reg_pack][elem]", w_pack, b_pack)
        scalar_value = _normalized(p, "vals[reg_pack][elem]", w_col, b_col)
        return f"""\
// The row's values (prologue applied) in registers; zeros past its end.
{p.ctype} vals[kPacks][kVec];
#pragma unroll
for (int reg_pack = 0; reg_pack < kPacks; ++reg_pack) {{
    const long long col0 = ((long long)reg_pack * kGroup + lane) * kVec;
    if (packed && active && col0 < row_len) {{   // row_len % kVec == 0: the whole pack is in the row
        const long long pack = (row_start + col0) / kVec;
{indent(chr(10).join(decl + loads), 8)}
#pragma unroll
        for (int elem = 0; elem < kVec; ++elem) {{
{indent(p.value_code(raw_pack, "val"), 12)}
            vals[reg_pack][elem] = val;
        }}
    }} else {{
#pragma unroll
        for (int elem = 0; elem < kVec; ++elem) {{
            const long long col = col0 + elem;
            vals[reg_pack][elem] = {zero};
            if (active && col < row_len) {{
{indent(p.value_code(raw_scalar, "val"), 16)}
                vals[reg_pack][elem] = val;
            }}
        }}
    }}
}}
{self._stats_code(p, partials)}
{registers_write_code(p, packed_value, scalar_value, _affine_loads(p, "col0"))}"""

    def _streaming_body(self, p: RowwisePlan, point: Point, cached: bool) -> str:
        accesses = p.accesses(point["vec"])
        ct = p.ctype
        raw = {a.name: pack_element(a, "slot", "elem", "pack * kVec + elem") for a in accesses}
        layer = p.anchor.op == "layer_norm"
        add = "welford_add(stats, val);" if layer else "squares += val * val;"
        fold = p.value_code(raw, "val")
        per_pack: dict[str, str] = {}
        if layer or cached:   # the pack's values: Welford per pack (one division), the cache
            fold += "\ncached.v[elem] = val;"
            per_pack["before_elements"] = f"Pack<{ct}, kVec> cached;"
            per_pack["after_elements"] = "\n".join(filter(None, [
                "welford_add_pack(stats, cached.v);" if layer else "",
                f"store_pack<{ct}, kVec>(row_cache, pack - first_pack, cached);" if cached else ""]))
        if not layer:
            fold += "\n" + add
        step = pack_step(accesses, point["unroll"], "next_pack + slot * kGroup", fold, **per_pack)
        tail = pack_step(accesses, 1, "next_pack", fold, **per_pack)
        w_pack, b_pack = _affine_raw(p, True, "")
        w_col, b_col = _affine_raw(p, False, "col")
        zero = literal(0.0, ct)
        rsqrt = "rsqrtf" if ct == "float" else "rsqrt"
        if layer:
            init = f"Welford stats = {{{zero}, {zero}, {zero}}};"
            partials = "warp_partials" if point["group"] > 32 else "(Welford*)nullptr"
            finish = (f"stats = group_reduce<kGroup>(stats, MergeWelford(), {partials});\n"
                      f"const {ct} mean = stats.mean;\n"
                      f"const {ct} rstd = {rsqrt}(stats.m2 / ({ct})row_len + kEps);")
        else:
            init = f"{ct} squares = {zero};"
            partials = "warp_partials" if point["group"] > 32 else f"({ct}*)nullptr"
            finish = (f"squares = group_reduce<kGroup>(squares, SumOp(), {partials});\n"
                      f"const {ct} rstd = {rsqrt}(squares / ({ct})row_len + kEps);")
        return two_pass_body(
            p, point, cached, pass1="the row's statistics in one read.", init=init, step=step, tail=tail,
            scalar_fold=add, finish=finish, pass2=", normalize and write.",
            packed_value=_normalized(p, "val", w_pack, b_pack),
            scalar_value=_normalized(p, "val", w_col, b_col),
            pack_setup=_affine_loads(p, "pack * kVec - row_start"))


def _normalized(p: RowwisePlan, value: str, weight_raw: str | None, bias_raw: str | None) -> str:
    """The anchor's value for `value` (the row's mean and rstd in scope)."""
    centered = f"({value} - mean)" if p.anchor.op == "layer_norm" else value
    out = f"{centered} * rstd"
    if weight_raw is not None:
        out = f"{out} * {leaf_value(_affine(p)[0].dtype, weight_raw, p.ctype)}"
    if bias_raw is not None:
        out = f"{out} + {leaf_value(_affine(p)[1].dtype, bias_raw, p.ctype)}"
    return out


def _affine_raw(p: RowwisePlan, packed: bool, col: str) -> tuple[str | None, str | None]:
    """Raw weight and bias elements: from their packs, or at column `col`."""
    weight, bias = _affine(p)
    raw = [None if n is None else (f"{n.name}_pack.v[elem]" if packed else f"{n.name}[{col}]")
           for n in (weight, bias)]
    return raw[0], raw[1]


def _affine_loads(p: RowwisePlan, col0: str) -> str:
    """Pack loads of weight and bias for the pack starting at row column `col0`."""
    lines = []
    for n in _affine(p):
        if n is not None:
            lines.append(f"const Pack<{n.dtype.c_type}, kVec> {n.name}_pack = "
                         f"load_pack<{n.dtype.c_type}, kVec>({n.name}, ({col0}) / kVec);")
    return "\n".join(lines)


def _sum_code(ctype: str) -> str:
    return f"""\
struct SumOp {{
    __device__ __forceinline__ {ctype} operator()({ctype} a, {ctype} b) const {{ return a + b; }}
}};"""


def _welford_code(ctype: str) -> str:
    zero, one = literal(0.0, ctype), literal(1.0, ctype)
    return f"""\
// Welford's running statistics: count, mean and M2 (the sum of squared deviations).
struct Welford {{
    {ctype} count;
    {ctype} mean;
    {ctype} m2;
}};

__device__ __forceinline__ void welford_add(Welford& s, {ctype} v) {{
    s.count += {one};
    const {ctype} delta = v - s.mean;
    s.mean += delta / s.count;
    s.m2 += delta * (v - s.mean);
}}

// Adds kVec values at once: their own mean and M2 first, then one merge (one division).
__device__ __forceinline__ void welford_add_pack(Welford& s, const {ctype} (&v)[kVec]) {{
    {ctype} sum = {zero};
#pragma unroll
    for (int i = 0; i < kVec; ++i) sum += v[i];
    const {ctype} chunk_mean = sum * ({one} / kVec);
    {ctype} chunk_m2 = {zero};
#pragma unroll
    for (int i = 0; i < kVec; ++i) chunk_m2 += (v[i] - chunk_mean) * (v[i] - chunk_mean);
    const {ctype} count = s.count + kVec;
    const {ctype} delta = chunk_mean - s.mean;
    const {ctype} share = kVec / count;
    s.mean += delta * share;
    s.m2 += chunk_m2 + delta * delta * s.count * share;
    s.count = count;
}}

// Chan et al.'s merge of two partial Welford states (fixed operand order: deterministic).
struct MergeWelford {{
    __device__ __forceinline__ Welford operator()(Welford a, Welford b) const {{
        const {ctype} count = a.count + b.count;
        if (count == {zero}) return a;
        const {ctype} delta = b.mean - a.mean;
        const {ctype} b_share = b.count / count;
        return Welford{{count, a.mean + delta * b_share, a.m2 + b.m2 + delta * delta * a.count * b_share}};
    }}
}};"""


# ---------------------------------------------------------------------------------------------
# norm.split_rows

class SplitRowNorm(Sketch):
    """Few long rows: `chunks` blocks per row. A stats kernel writes each chunk's Welford state
    (sum of squares for rms_norm); a write kernel merges the row's partials (same fixed order in
    every block), then rereads its chunk, normalizes and writes it."""
    name = "norm.split_rows"
    pattern = "norm"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        return axis_unsupported(problem, LOCALS, _plan)

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        p = _must_plan(problem)
        return split_row_space(p, arch, vec_width=_vec_width(p), base_registers=BASE_REGISTERS,
                               state_registers=lambda pt: pt["vec"] + 6)

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        p = _must_plan(problem)
        return split_row_default(p, arch, self.space(problem, arch), _vec_width(p))

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        p = _must_plan(problem)
        vec, unroll = point["vec"], point["unroll"]
        params = launcher_params(problem)
        accesses = p.accesses(vec)
        out_name, out_t, ct = problem.program.output_name, problem.output.dtype.c_type, p.ctype
        raw = {a.name: pack_element(a, "slot", "elem", "pack * kVec + elem") for a in accesses}
        raw_scalar = {a.name: scalar_element(a, "row_start + col") for a in accesses}
        layer = p.anchor.op == "layer_norm"
        zero = literal(0.0, ct)
        rsqrt = "rsqrtf" if ct == "float" else "rsqrt"
        if layer:   # Welford per pack: one division per kVec elements
            stat_t, merge, init = "Welford", "MergeWelford()", f"Welford{{{zero}, {zero}, {zero}}}"
            gather = chunk_loops(accesses, unroll, p.value_code(raw, "val") + "\ncached.v[elem] = val;",
                                 p.value_code(raw_scalar, "val") + "\nwelford_add(stats, val);",
                                 before_elements=f"Pack<{ct}, kVec> cached;",
                                 after_elements="welford_add_pack(stats, cached.v);")
            finish = (f"const {ct} mean = stats.mean;\n"
                      f"const {ct} rstd = {rsqrt}(stats.m2 / ({ct})row_len + kEps);")
        else:
            stat_t, merge, init = ct, "SumOp()", zero
            gather = chunk_loops(accesses, unroll, p.value_code(raw, "val") + "\nstats += val * val;",
                                 p.value_code(raw_scalar, "val") + "\nstats += val * val;")
            finish = f"const {ct} rstd = {rsqrt}(stats / ({ct})row_len + kEps);"
        w_pack, b_pack = _affine_raw(p, True, "")
        w_col, b_col = _affine_raw(p, False, "col")
        write = chunk_loops(
            accesses, unroll,
            p.value_code(raw, "val") + "\n" +
            p.store_code(_normalized(p, "val", w_pack, b_pack), "pack * kVec + elem", "out_pack.v[elem]"),
            p.value_code(raw_scalar, "val") + "\n" +
            p.store_code(_normalized(p, "val", w_col, b_col), "row_start + col",
                         f"{out_name}[row_start + col]"),
            before_elements="\n".join(filter(None, [_affine_loads(p, "pack * kVec - row_start"),
                                                    f"Pack<{out_t}, kVec> out_pack;"])),
            after_elements=f"store_pack<{out_t}, kVec>({out_name}, pack, out_pack);")
        helpers = [PACK_HELPERS, SHUFFLE_HELPERS, _sum_code(ct)] + ([_welford_code(ct)] if layer else [])
        packed = p.packed_check(vec, p.view.reduced)
        if vec > 1:
            packed += "".join(f" && reinterpret_cast<uintptr_t>({n.name}) % 16 == 0"
                              for n in _affine(p) if n is not None)
        return split_rows_rendered(
            self.name, p, arch, point, name, params,
            constants=f"constexpr {ct} kEps = {literal(_eps(p), ct)};\n", helpers="\n".join(helpers),
            stats=ChunkStats(stat_t, 3 if layer else 1, init, merge, "statistics"), gather=gather,
            finish=finish, write=write, writes=", normalizes and writes it", packed_check=packed,
            kernels=" and a normalize-and-write kernel")


SKETCHES: list[Sketch] = [RowNorm(), SplitRowNorm()]

SAMPLE_INTENTS: list[str] = [
    "y = layer_norm(x, [16384], weight=w, bias=b); x: f32[16384, 16384]; w: f32[16384]; b: f32[16384]",
    "y = layer_norm(x, [1024]); x: f32[4096, 1024]",
    "y = rms_norm(x, [4096], weight=w); x: bf16[N, 4096]; w: bf16[4096]; N=777",
    "y = rms_norm(x, [1001], weight=w, eps=1e-6); x: f16[333, 1001]; w: f16[1001]",
    "y = layer_norm(x, [768], weight=w, bias=b, eps=1e-5); x: f16[B, 768]; w: f16[768]; b: f16[768]",
    "y = layer_norm(x, [250]); x: f64[100, 3, 250]",
    "y = relu(layer_norm(x * 2.0, [65536], weight=w)); x: f32[64, 65536]; w: f32[65536]",
    "y = rms_norm(x); x: f32[M, K]",
    "y = layer_norm(x + r, [1024]) * 0.5; x, r: f16[N, 1024]",
]
