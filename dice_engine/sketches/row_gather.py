"""`row_gather.rows`: a per-row value picked at a class index, in one read of each row.

Serves programs whose output is elementwise work over a row gather (`ir/row_gather.py`):
nll_loss's and cross_entropy's per-row loss `-log_softmax(x)[r, t[r]]` with ignore_index, or a
plain `x[r, t[r]]`. For a log_softmax a group of `group` threads walks its row once with
`vec`-wide loads (`unroll` packs in flight), keeping a running max and sum of exponentials
(fp32 for f32, the max shift keeps every term <= 1), merged over the group by a fixed shuffle
tree; the group's first thread then reads the target and the one element x[r, t], and writes
logp = x[r, t] - max - log(sum) through the epilogue. A plain gather needs no row pass: a
thread per row. Reductions over the rows (the batch mean) are the next kernel's work.

Math runs in float (halves are widened as they load; double for f64) with expf/logf (not the
fast intrinsics).
"""
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.dtypes import DType
from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE
from ..ir.patterns import Problem
from ..ir.row_gather import RowGather, row_gathers
from .base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, dim_c, launcher_params,
                   store_from_compute)
from .fusion import emit_expression, kernel_param_list, leaf_value, name_clash
from .warp import (PACK_HELPERS, SHUFFLE_HELPERS, block_threads_violation, indent, launcher_opening,
                   min_blocks_per_sm, pow2_range, register_budget, rendered_kernel)

BASE_REGISTERS = 32
SUPPORTED_DTYPES = ("f32", "f64", "f16", "bf16")

# Identifiers the kernel declares (a tensor or symbol must not shadow them).
LOCALS = frozenset("""
    rows row_len lane row active xrow acc packs pk vals pack cls picked warp_partials packed c u one
    row_packs top pk0 e in_row v
""".split())


def _gather(problem: Problem) -> RowGather | str:
    """The program's one row gather with only elementwise work per row after it, or why not."""
    out = problem.program.output
    gathers = row_gathers(out)
    if len(gathers) != 1:
        return "no row gather (a one-hot select of a row summed over dim 1)"
    g = gathers[0]
    if g.values.dtype.name not in SUPPORTED_DTYPES:
        return f"row gathers of {g.values.dtype} are served by the general lowering"
    rows = g.values.shape[0]
    if tuple(out.shape) != (rows,):
        return "the output is not one value per row"
    stack, seen = [out], set()
    while stack:
        n = stack.pop()
        if n is g.reduce or id(n) in seen:
            continue
        seen.add(id(n))
        if n.op == "input":
            if tuple(n.shape) not in ((rows,), (rows, 1), ()):
                return f"the epilogue reads '{n.name}' of shape {list(n.shape)}, not one value per row"
        elif n.op != "const" and n.op not in ELEMENTWISE:
            return f"the epilogue holds '{n.op}', not elementwise work per row"
        stack.extend(n.args)
    return g


def _must(problem: Problem) -> RowGather:
    g = _gather(problem)
    if isinstance(g, str):
        raise ValueError(g)
    return g


def _ctype(g: RowGather) -> str:
    return "double" if g.values.dtype.name == "f64" else "float"


class RowGatherRows(Sketch):
    name = "row_gather.rows"
    pattern = "program"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        g = _gather(problem)
        if isinstance(g, str):
            return g
        return name_clash(problem, LOCALS)

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        g = _must(problem)
        size = g.values.dtype.size
        vecs = pow2_range(1, 16 // size)
        tokens = [
            Token("group", pow2_range(4, 1024) if g.log_softmax else (1,),
                  "threads per row (a sub-warp, a warp or a block); 1 without a row pass",
                  (Role.THREADS, Role.SPLIT)),
            Token("threads", (64, 128, 256, 512, 1024), "threads per block (threads / group rows)",
                  (Role.THREADS,)),
            Token("vec", vecs if g.log_softmax else (1,), "elements per load (16-byte packs at most)",
                  (Role.VECTOR,)),
            Token("unroll", (1, 2, 4, 8) if g.log_softmax else (1,), "packs in flight per thread",
                  (Role.UNROLL,)),
        ]

        def fits(pt: Point) -> str | None:
            if pt["threads"] % pt["group"]:
                return "threads must be a multiple of group"
            bad = block_threads_violation(arch, pt["threads"])
            if bad:
                return bad
            # per pack in flight: its words, its in-row flag and its address
            need = BASE_REGISTERS + pt["unroll"] * (max(1, pt["vec"] * size // 4) + 2)
            if need > register_budget(arch, pt["threads"]):
                return f"~{need} registers per thread needed"
            return None

        return DesignSpace(tokens, [fits])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        g = _must(problem)
        vec = 16 // g.values.dtype.size
        if not g.log_softmax:
            return {"group": 1, "threads": 256, "vec": 1, "unroll": 1}
        cols = problem.program.concrete_shape(g.values.shape)[1]
        # the group doubles until each thread holds about 16 elements of its row (up to 512
        # threads: long rows spread over a block rather than serialising in one warp)
        group = 4
        while group < 512 and group * vec * 16 < cols:
            group *= 2
        point = {"group": group, "threads": max(256, group), "vec": vec, "unroll": 4}
        space = self.space(problem, arch)
        while not space.is_legal(point) and point["unroll"] > 1:
            point["unroll"] //= 2
        return point

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        g = _must(problem)
        ct = _ctype(g)
        f = "f" if ct == "float" else ""
        group, threads, vec, unroll = point["group"], point["threads"], point["vec"], point["unroll"]
        program = problem.program
        x, t, out = g.values.name, g.target.name, program.output_name
        xt = g.values.dtype.c_type
        rows, cols = dim_c(g.values.shape[0]), dim_c(g.values.shape[1])
        params = launcher_params(problem)
        kernel = f"{name}_kernel"
        epi = emit_expression(program.output, _row_inputs(program.output, g), ct,
                              anchor=g.reduce, anchor_value="picked", prefix="epi")
        pass_code = _row_pass(ct, g.values.dtype, x, f, group) if g.log_softmax else ""
        pass_constants = (f"constexpr int kVec = {vec};           // elements per load\n"
                          f"constexpr int kUnroll = {unroll};     // packs in flight per thread\n"
                          if g.log_softmax else "")
        block_partials = g.log_softmax and group > 32   # a group past a warp merges in shared memory
        partials_decl = ("    __shared__ MaxSum warp_partials[kThreads / 32];   // one per warp\n"
                         if block_partials else "")
        picked = (f"{leaf_value(g.values.dtype, 'xrow[cls]', ct)} - acc.max - log{f}(acc.sum)"
                  if g.log_softmax else leaf_value(g.values.dtype, "xrow[cls]", ct))
        device = f"""\
constexpr int kGroup = {group};       // threads per row
constexpr int kThreads = {threads};   // threads per block
constexpr int kRowsPerBlock = kThreads / kGroup;
{pass_constants}constexpr int kMinBlocks = {min_blocks_per_sm(arch, threads)};  // blocks per SM (registers)

{PACK_HELPERS}

{SHUFFLE_HELPERS}

{_online_code(ct, f)}

// One row gather per row: {"log_softmax(x)" if g.log_softmax else "x"}[r, t[r]] then the epilogue.
__global__ void __launch_bounds__(kThreads, kMinBlocks)
{kernel}({", ".join(kernel_param_list(params))}, bool packed) {{
{partials_decl}    const long long rows = {rows};
    const long long row_len = {cols};
    const int lane = threadIdx.x % kGroup;
    const long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kGroup;
    const bool active = row < rows;
    const {xt}* __restrict__ xrow = {x} + (active ? row : 0) * row_len;
{indent(pass_code, 4)}
    if (!active || lane != 0) return;   // no barrier follows
    const long long cls = (long long){t}[row];
    {ct} picked = 0;   // a target outside the row picks nothing
    if (cls >= 0 && cls < row_len) picked = {picked};
{indent(chr(10).join(epi.statements), 4)}
    {out}[row] = {store_from_compute(program.output.dtype, epi.value)};
}}"""
        packed_check = (f"row_len % kn::kVec == 0 && reinterpret_cast<unsigned long long>({x}) % 16 == 0"
                        if g.log_softmax else "false")   # a plain gather reads one element per row
        sizes = {"rows": str(rows), **({"row_len": str(cols)} if g.log_softmax else {})}
        args = ", ".join([q.name for q in params] + ["packed"])
        launcher = f"""\
{launcher_opening(name, params, sizes, "rows == 0")}
    const bool packed = {packed_check};
    const long long blocks = (rows + kn::kRowsPerBlock - 1) / kn::kRowsPerBlock;
    kn::{kernel}<<<(unsigned)blocks, kn::kThreads, 0, stream>>>({args});
}}"""
        shape = program.concrete_shape(g.values.shape)
        row_count, col_count = shape[0], shape[1]
        strategy = (f"row gather: {group} threads per row, {vec}-wide loads, {unroll} in flight; "
                    + ("online max/sum-exp in one read, then x[r, t] - max - log(sum)" if g.log_softmax
                       else "x[r, t] per row"))
        launch = Launch(kernel, (-(-row_count // (threads // group)), 1, 1), (threads, 1, 1),
                        (threads // 32) * 2 * g.values.dtype.size if block_partials else 0)
        rendered = rendered_kernel(self.name, point, name, strategy, device, launcher, params, [launch])
        per_row = sum(n.dtype.size for n in program.input_nodes() if n.name != x) + program.output.dtype.size
        row_reads = (col_count if g.log_softmax else 1) * g.values.dtype.size
        rendered.dram_bytes = float(row_count * (per_row + row_reads))
        return rendered


def _row_inputs(output: Node, g: RowGather) -> dict[str, str]:
    """Each input the epilogue reads, loaded at the row (a scalar input at its one element)."""
    return {n.name: (f"{n.name}[0]" if not n.shape else f"{n.name}[row]")
            for n in output.walk() if n.op == "input" and n is not g.values}


def _online_code(ct: str, f: str) -> str:
    return f"""\
// A running softmax denominator: the largest value seen and the sum of exp(value - max).
struct MaxSum {{
    {ct} max;
    {ct} sum;
}};

// Folds the values v[0..N) into `acc` with at most one rescale (at the largest of them).
template <int N>
__device__ __forceinline__ void online_add(MaxSum& acc, const {ct} (&v)[N]) {{
    {ct} top = v[0];
#pragma unroll
    for (int i = 1; i < N; ++i) top = fmax{f}(top, v[i]);
    if (top > acc.max) {{
        acc.sum *= exp{f}(acc.max - top);   // 0 while nothing was added (exp(-inf) = 0)
        acc.max = top;
    }}
    if (acc.max == -INFINITY) return;        // all -inf so far: nothing to add (-inf - -inf = NaN)
#pragma unroll
    for (int i = 0; i < N; ++i) acc.sum += exp{f}(v[i] - acc.max);
}}

// Merges two running MaxSums (fixed operand order: deterministic).
struct MergeMaxSum {{
    __device__ __forceinline__ MaxSum operator()(MaxSum a, MaxSum b) const {{
        const {ct} top = fmax{f}(a.max, b.max);
        if (top == -INFINITY) return MaxSum{{top, 0}};
        return MaxSum{{top, a.sum * exp{f}(a.max - top) + b.sum * exp{f}(b.max - top)}};
    }}
}};"""


def _row_pass(ct: str, dtype: DType, x: str, f: str, group: int) -> str:
    """The group's walk over its row: packed loads when the row allows, else one at a time;
    values are folded in the compute type `ct`."""
    xt = dtype.c_type
    partials = "warp_partials" if group > 32 else "(MaxSum*)nullptr"
    return f"""\
MaxSum acc = {{-INFINITY, 0}};
if (active && packed) {{   // row_len % kVec == 0 and x 16-byte aligned: every pack is in one row
    const long long packs = row_len / kVec;
    const Pack<{xt}, kVec>* __restrict__ row_packs = reinterpret_cast<const Pack<{xt}, kVec>*>(xrow);
    for (long long pk0 = lane; pk0 < packs; pk0 += (long long)kUnroll * kGroup) {{
        // kUnroll packs in flight at once; those past the row's end read as -inf (add nothing)
        Pack<{xt}, kVec> vals[kUnroll];
        bool in_row[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {{
            const long long pk = pk0 + (long long)u * kGroup;
            in_row[u] = pk < packs;
            if (in_row[u]) vals[u] = row_packs[pk];
        }}
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {{
            {ct} v[kVec];
#pragma unroll
            for (int e = 0; e < kVec; ++e)
                v[e] = in_row[u] ? {leaf_value(dtype, "vals[u].v[e]", ct)} : -INFINITY;
            online_add(acc, v);
        }}
    }}
}} else if (active) {{
    for (long long c = lane; c < row_len; c += kGroup) {{
        const {ct} one[1] = {{{leaf_value(dtype, "xrow[c]", ct)}}};
        online_add(acc, one);
    }}
}}
acc = group_reduce<kGroup>(acc, MergeMaxSum(), {partials});"""


SKETCHES: list[Sketch] = [RowGatherRows()]

SAMPLE_INTENTS: list[str] = [
    "y = cross_entropy(x, t, reduction='none'); x: f32[4096, 1000]; t: i64[4096]",
    "y = nll_loss(x, t, reduction='none'); x: f64[333, 77]; t: i64[333]",
    "y = cross_entropy(x, t, reduction='none'); x: bf16[512, 32000]; t: i64[512]",
]
