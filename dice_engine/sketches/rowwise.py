"""Row-wise fused operators (softmax along an axis, norms over the last axis): the plan shared
by their sketches (view, compute type, prologue on the argument, epilogue on the result, which
pointers must be aligned for packs), the design spaces and priors of their rows and split-rows
sketches, the kernels and launchers those render into (each family supplying its statistics
and per-element code), and the shared-memory row cache.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..arch import ArchSpec
from ..ir.graph import Node, Program
from ..ir.patterns import Problem
from .access import (SPLIT_ROW_PROLOGUE, Access, AxisView, axis_view, broadcast_offset, fitting_vec, hint_int,
                     pack_element, pack_registers, pack_step, paren, plan_access, scalar_element,
                     vec_violation)
from .base import (DesignSpace, Launch, Param, Point, RenderedKernel, Role, Token,
                   store_from_compute)
from .fusion import describe, emit_expression, expression_ctype, input_nodes, kernel_param_list
from .warp import (dynamic_smem_lines, indent, launcher_opening, min_blocks_per_sm, pack_width, pow2_range,
                   register_budget, rendered_kernel, wave_grid_cap, workspace_code)

ROW_GRID_WAVES = 4       # grid-stride cap for the `*.rows` kernels, in waves of resident blocks

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


# ---------------------------------------------------------------------------------------------
# Design spaces: a group of threads per row (`*.rows`), `chunks` blocks per row (`*.split_rows`)

def packs_per_thread(p: RowwisePlan, point: Point) -> int:
    """Packs of the row each thread of a `*.rows` group holds (cache=registers)."""
    row = p.view.reduced_int or 0
    return max(1, -(-row // (point["group"] * point["vec"])))


def row_vec(p: RowwisePlan, vec_width: int) -> int:
    """The prior's vec: `vec_width` unless a known row length is not a multiple of it."""
    return fitting_vec(p.view.reduced_int, vec_width)


def row_group(program: Program, view: AxisView, arch: ArchSpec, vec: int, max_packs: int) -> int:
    """The prior's `*.rows` group (reduction.rows' too) over the rows of `view`: about
    `max_packs` packs per thread at most (long rows get a block, short ones a few lanes), wider
    while the GPU is not yet full and each thread keeps >= 2 packs."""
    row = hint_int(program, view.reduced_dims)
    rows = hint_int(program, view.outer_dims)
    packs = max(1, -(-row // vec))
    group = min(1024, max(4, 1 << max(0, -(-packs // max_packs) - 1).bit_length()))
    full = arch.sms * arch.max_threads_per_sm
    while group < 1024 and rows * group < full and packs // (2 * group) >= 2:
        group *= 2
    return group


def row_space(p: RowwisePlan, arch: ArchSpec, *, vec_width: int, base_registers: int,
              stream_state_values: int) -> DesignSpace:
    """The `*.rows` space. `stream_state_values`: the running statistics a thread keeps in the
    streaming passes (values of `p.ctype`), on top of `base_registers`."""
    tokens = [
        Token("group", pow2_range(4, 1024), "threads cooperating on one row", (Role.THREADS,)),
        Token("threads", (64, 128, 256, 512, 1024), "threads per block (threads/group rows per block)",
              (Role.THREADS,)),
        Token("vec", tuple(sorted({1, vec_width})), "elements per access (16-byte packs when > 1)",
              (Role.VECTOR,)),
        Token("cache", ("registers", "shared", "none"),
              "row kept in registers or shared memory (one read), or streamed twice", (Role.SMEM,)),
        Token("unroll", (1, 2, 4), "packs in flight per thread per step (streaming passes)", (Role.UNROLL,)),
    ]
    value_words = 2 if p.ctype == "double" else 1

    def shape_fits(pt: Point) -> str | None:
        if pt["threads"] % pt["group"]:
            return f"group={pt['group']} does not divide threads={pt['threads']}"
        if pt["threads"] > arch.max_threads_per_block:
            return f"{pt['threads']} threads exceed the block limit {arch.max_threads_per_block}"
        return vec_violation("row length", p.view.reduced_int, pt["vec"])

    def registers_fit(pt: Point) -> str | None:
        budget = register_budget(arch, pt["threads"])
        if pt["cache"] != "none" and p.view.reduced_int is None:
            return f"cache={pt['cache']} needs a row length known when generating"
        if pt["cache"] == "shared":
            smem = row_cache_bytes(p, pt)
            if smem + arch.smem_reserved_per_block > arch.smem_per_block_optin:
                return f"{smem} bytes of row cache exceed the shared memory per block"
        if pt["cache"] == "registers":
            if pt["unroll"] != 1:
                return "unroll only applies to the streaming passes (cache=shared/none)"
            need = base_registers + packs_per_thread(p, pt) * pt["vec"] * value_words
        else:
            need = (base_registers + pack_registers(p.accesses(pt["vec"]), pt["vec"], pt["unroll"])
                    + stream_state_values * value_words)
        if need > budget:
            return f"~{need} registers per thread needed, {budget} available at {pt['threads']} threads"
        return None

    return DesignSpace(tokens, [shape_fits, registers_fit])


def split_row_space(p: RowwisePlan, arch: ArchSpec, *, vec_width: int, base_registers: int,
                    state_registers: Callable[[Point], int]) -> DesignSpace:
    """The `*.split_rows` space. `state_registers(point)`: what a thread keeps beyond
    `base_registers` and the packs in flight (its chunk's statistics)."""
    tokens = [
        Token("threads", (128, 256, 512, 1024), "threads per block", (Role.THREADS,)),
        Token("chunks", (2, 4, 8, 16, 32, 64, 128), "blocks per row", (Role.SPLIT,)),
        Token("vec", tuple(sorted({1, vec_width})), "elements per access (16-byte packs when > 1)",
              (Role.VECTOR,)),
        Token("unroll", (1, 2, 4), "packs in flight per thread per step", (Role.UNROLL,)),
    ]

    def fits(pt: Point) -> str | None:
        if pt["threads"] > arch.max_threads_per_block:
            return f"{pt['threads']} threads exceed the block limit {arch.max_threads_per_block}"
        bad_vec = vec_violation("row length", p.view.reduced_int, pt["vec"])
        if bad_vec:
            return bad_vec
        need = (base_registers + pack_registers(p.accesses(pt["vec"]), pt["vec"], pt["unroll"])
                + state_registers(pt))
        if need > register_budget(arch, pt["threads"]):
            return f"~{need} registers per thread needed"
        return None

    return DesignSpace(tokens, [fits])


def split_row_default(p: RowwisePlan, arch: ArchSpec, space: DesignSpace, vec_width: int) -> Point:
    """The `*.split_rows` prior: enough chunks for about two resident waves of 256-thread
    blocks while each thread keeps >= 8 packs."""
    vec = row_vec(p, vec_width)
    rows = hint_int(p.problem.program, p.view.outer_dims)
    row = hint_int(p.problem.program, p.view.reduced_dims)
    want_blocks = 2 * arch.sms * (arch.max_threads_per_sm // 256)
    chunks = 2
    for c in space.token("chunks").choices:
        if rows * c <= want_blocks and row // (c * 256 * vec) >= 8:
            chunks = c
    point = {"threads": 256, "chunks": chunks, "vec": vec, "unroll": 2}
    if not space.is_legal(point):
        point.update(unroll=1, vec=1)
    return point


# ---------------------------------------------------------------------------------------------
# `*.rows` per-row bodies: the row in registers, or streamed in two passes

def registers_write_code(p: RowwisePlan, packed_value: str, scalar_value: str, pack_setup: str = "") -> str:
    """The `*.rows` cache=registers write loop: each of the thread's kPacks packs of the row
    through the epilogue to the output (a 16-byte store per pack when `packed`). The values are
    C expressions of `reg_pack`, `elem` (and `col`); `pack_setup` runs before a packed store."""
    out_name, out_t = p.problem.program.output_name, p.problem.output.dtype.c_type
    return f"""\
#pragma unroll
for (int reg_pack = 0; reg_pack < kPacks; ++reg_pack) {{
    const long long col0 = ((long long)reg_pack * kGroup + lane) * kVec;
    if (!active || col0 >= row_len) continue;
    if (packed) {{
{indent(pack_setup, 8)}
        Pack<{out_t}, kVec> out_pack;
#pragma unroll
        for (int elem = 0; elem < kVec; ++elem) {{
{indent(p.store_code(packed_value, "row_start + col0 + elem", "out_pack.v[elem]"), 12)}
        }}
        store_pack<{out_t}, kVec>({out_name}, (row_start + col0) / kVec, out_pack);
    }} else {{
#pragma unroll
        for (int elem = 0; elem < kVec; ++elem) {{
            const long long col = col0 + elem;
            if (col < row_len) {{
{indent(p.store_code(scalar_value, "row_start + col", f"{out_name}[row_start + col]"), 16)}
            }}
        }}
    }}
}}"""


def two_pass_body(p: RowwisePlan, point: Point, cached: bool, *, pass1: str, init: str, step: str,
                  tail: str, scalar_fold: str, finish: str, pass2: str, packed_value: str,
                  scalar_value: str, pack_setup: str = "") -> str:
    """The `*.rows` streaming body (cache=shared/none): pass 1 folds the row into statistics
    (`init`; `step`/`tail`: kUnroll packs and one pack, which with `cached` also fill the row
    cache; `scalar_fold` after each scalar `val`), `finish` merges them across the group, pass 2
    writes `packed_value`/`scalar_value` (C expressions of `val`), rereading the row from the
    row cache or from memory. `pass1`/`pass2`: the passes' comments; `pack_setup` runs before
    each packed write. Each thread rereads only the cache slots it wrote: no barrier needed."""
    accesses = p.accesses(point["vec"])
    ct = p.ctype
    out_name, out_t = p.problem.program.output_name, p.problem.output.dtype.c_type
    raw = {a.name: pack_element(a, "slot", "elem", "pack * kVec + elem") for a in accesses}
    raw_scalar = {a.name: scalar_element(a, "row_start + col") for a in accesses}
    keep_scalar = "\nrow_cache[col] = val;" if cached else ""
    reread = f"const {ct} val = cached.v[elem];" if cached else p.value_code(raw, "val")
    reread_scalar = f"const {ct} val = row_cache[col];" if cached else p.value_code(raw_scalar, "val")
    write_elem = reread + "\n" + p.store_code(packed_value, "pack * kVec + elem", "out_pack.v[elem]")
    reload = (f"const Pack<{ct}, kVec> cached = load_pack<{ct}, kVec>(row_cache, pack - first_pack);"
              if cached else "")
    before = "\n".join(filter(None, [reload, pack_setup, f"Pack<{out_t}, kVec> out_pack;"]))
    write = pack_step([] if cached else accesses, 1, "next_pack", write_elem, before_elements=before,
                      after_elements=f"store_pack<{out_t}, kVec>({out_name}, pack, out_pack);")
    source = "the shared-memory row cache" if cached else "the row again (mostly from L2)"
    return f"""\
// Pass 1: {pass1}
{init}
long long scalar_from = 0;
const long long first_pack = row_start / kVec, pack_end = first_pack + row_len / kVec;
if (active && packed) {{   // row_len % kVec == 0 and the packed pointers are 16-byte aligned
    long long next_pack = first_pack + lane;
    #pragma unroll 1
    for (; next_pack + (kUnroll - 1) * kGroup < pack_end; next_pack += kUnroll * kGroup) {{
{indent(step, 8)}
    }}
    #pragma unroll 1
    for (; next_pack < pack_end; next_pack += kGroup) {{
{indent(tail, 8)}
    }}
    scalar_from = row_len;
}}
if (active) {{
    #pragma unroll 1
    for (long long col = scalar_from + lane; col < row_len; col += kGroup) {{
{indent(p.value_code(raw_scalar, "val") + keep_scalar, 8)}
{indent(scalar_fold, 8)}
    }}
}}
{finish}
// Pass 2: read {source}{pass2}
if (active && packed) {{
    #pragma unroll 1
    for (long long next_pack = first_pack + lane; next_pack < pack_end; next_pack += kGroup) {{
{indent(write, 8)}
    }}
}}
if (active) {{
    #pragma unroll 1
    for (long long col = scalar_from + lane; col < row_len; col += kGroup) {{
{indent(reread_scalar, 8)}
{indent(p.store_code(scalar_value, "row_start + col", f"{out_name}[row_start + col]"), 8)}
    }}
}}"""


# ---------------------------------------------------------------------------------------------
# The `*.rows` kernel: kGroup threads per row, the block's rows strided over a capped grid

def rows_rendered(sketch: str, p: RowwisePlan, arch: ArchSpec, point: Point, name: str,
                  params: list[Param], *, constants: str, helpers: list[str], operation: str,
                  partial_type: str, partial_words: int, body: str, packed_check: str,
                  how: str) -> RenderedKernel:
    """A `*.rows` kernel and its launcher around the sketch's per-row `body` (which sees `row`,
    `active`, `row_start`, `row_len`, `lane`, `packed` and, for cache=shared, `row_cache`).
    `constants`: the sketch's constexpr lines after kVec; `operation`: the kernel comment's
    tail; `partial_type` × `partial_words`: one warp's partial in `warp_partials` (blocks of
    several warps); `packed_check`: the launcher's condition for 16-byte packs."""
    group, threads, vec = point["group"], point["threads"], point["vec"]
    kernel = f"{name}_kernel"
    cached = point["cache"] == "shared"
    shared = f"    __shared__ {partial_type} warp_partials[kThreads / 32];\n" if group > 32 else ""
    device = f"""\
constexpr int kThreads = {threads};
constexpr int kMinBlocks = {min_blocks_per_sm(arch, threads)};  // per SM, for ptxas's register budget
constexpr int kGroup = {group};      // threads per row
constexpr int kRowsPerBlock = kThreads / kGroup;
constexpr int kVec = {vec};        // elements per access{" (16 bytes)" if vec > 1 else ""}
{constants}
{chr(10).join(helpers)}

// {describe(p.problem)}
// {p.anchor.op} over rows of {p.view.reduced} elements{operation}
__global__ void __launch_bounds__(kThreads, kMinBlocks)
{kernel}({", ".join(kernel_param_list(params))}, bool packed) {{
{shared}{row_cache_declaration(p) if cached else ''}    const long long rows = {p.view.outer};
    const long long row_len = {p.view.reduced};
    const int lane = threadIdx.x % kGroup;
    // Uniform trip count for the whole block: group_reduce may hold barriers.
    for (long long row0 = (long long)blockIdx.x * kRowsPerBlock; row0 < rows;
         row0 += (long long)gridDim.x * kRowsPerBlock) {{
        const long long row = row0 + threadIdx.x / kGroup;
        const bool active = row < rows;
        const long long row_start = row * row_len;
{indent(body, 8)}
    }}
}}"""
    cap = wave_grid_cap(arch, threads, ROW_GRID_WAVES)
    cache_bytes = row_cache_bytes(p, point) if cached else 0
    partials_bytes = (threads // 32) * partial_words * (4 if p.ctype == "float" else 8) if group > 32 else 0
    args = ", ".join([q.name for q in params] + ["packed"])
    launcher = f"""\
{launcher_opening(name, params, {"rows": p.view.outer}, "rows == 0")}
    const bool packed = {packed_check};
    const long long blocks = (rows + kn::kRowsPerBlock - 1) / kn::kRowsPerBlock;
    // Past {ROW_GRID_WAVES} waves of resident blocks, the blocks stride over the rows.
    const unsigned grid = (unsigned)(blocks < {cap} ? blocks : {cap});
{dynamic_smem_lines(arch, kernel, cache_bytes, partials_bytes)}
    kn::{kernel}<<<grid, kn::kThreads, smem_bytes, stream>>>({args});
}}"""
    who = "sub-warp" if group < 32 else "one warp" if group == 32 else f"{group // 32} warps"
    strategy = f"{p.anchor.op} over rows, {group} threads per row ({who}), {how}, {vec}-element accesses"
    rows_hint = hint_int(p.problem.program, p.view.outer_dims)
    blocks = min(-(-rows_hint // (threads // group)), cap)
    launch = Launch(kernel, (blocks, 1, 1), (threads, 1, 1), partials_bytes + cache_bytes)
    return rendered_kernel(sketch, point, name, strategy, device, launcher, params, [launch])


# ---------------------------------------------------------------------------------------------
# The `*.split_rows` kernels: a stats kernel per chunk, a write kernel merging a row's chunks

@dataclass(frozen=True)
class ChunkStats:
    """The statistics a `*.split_rows` sketch keeps per chunk and merges across a row."""
    c_type: str        # in device code ("MaxSum", "Welford", "float", ...)
    words: int         # values of the plan's ctype it holds
    init: str          # C initializer of an empty chunk's statistics
    merge: str         # C functor merging two of them
    what: str          # for the stats kernel's comment


def split_rows_rendered(sketch: str, p: RowwisePlan, arch: ArchSpec, point: Point, name: str,
                        params: list[Param], *, constants: str, helpers: str, stats: ChunkStats,
                        gather: str, finish: str, write: str, writes: str, packed_check: str,
                        kernels: str) -> RenderedKernel:
    """The stats and write kernels of a `*.split_rows` sketch and their launcher. `gather`
    folds the block's chunk into `stats`; `finish` turns the row's merged `stats` into what
    `write` (rereading the chunk) needs; `constants`: constexpr lines after kUnroll;
    `writes`/`kernels`: what the write kernel does (comment) and the two kernels (strategy)."""
    threads, chunks, vec, unroll = (point[k] for k in ("threads", "chunks", "vec", "unroll"))
    signature = ", ".join(kernel_param_list(params))
    stats_kernel, write_kernel = f"{name}_stats_kernel", f"{name}_write_kernel"
    prologue = SPLIT_ROW_PROLOGUE.format(row_len=p.view.reduced)
    stat_t = stats.c_type
    device = f"""\
constexpr int kThreads = {threads};
constexpr int kMinBlocks = {min_blocks_per_sm(arch, threads)};  // per SM, for ptxas's register budget
constexpr int kChunks = {chunks};    // blocks per row
constexpr int kVec = {vec};
constexpr int kUnroll = {unroll};    // packs in flight per thread per step
{constants}
{helpers}

// {describe(p.problem)}
// {p.anchor.op} over rows of {p.view.reduced} elements, each split over kChunks blocks.
// Stats: block (row, chunk) writes its chunk's {stats.what}.
__global__ void __launch_bounds__(kThreads, kMinBlocks)
{stats_kernel}({signature}, bool packed, {stat_t}* __restrict__ partials) {{
    __shared__ {stat_t} warp_partials[kThreads / 32];
{prologue}
    {stat_t} stats = {stats.init};
{indent(gather, 4)}
    stats = group_reduce<kThreads>(stats, {stats.merge}, warp_partials);
    if (threadIdx.x == 0) partials[blockIdx.x] = stats;
}}

// Write: every block of a row merges the row's kChunks partials in the same fixed order (so
// all agree bitwise), then rereads its chunk{writes}.
__global__ void __launch_bounds__(kThreads, kMinBlocks)
{write_kernel}({signature}, bool packed, const {stat_t}* __restrict__ partials) {{
    __shared__ {stat_t} warp_partials[kThreads / 32];
{prologue}
    {stat_t} stats = {stats.init};
    for (int part = threadIdx.x; part < kChunks; part += kThreads)
        stats = {stats.merge}(stats, partials[row * kChunks + part]);
    stats = group_reduce<kThreads>(stats, {stats.merge}, warp_partials);
{indent(finish, 4)}
{indent(write, 4)}
}}

{workspace_code(stat_t)}"""
    names = [q.name for q in params]
    stat_host = stat_t if stat_t in ("float", "double") else f"kn::{stat_t}"
    launcher = f"""\
{launcher_opening(name, params, {"rows": p.view.outer}, "rows == 0")}
    const bool packed = {packed_check};
    {stat_host}* partials = kn::workspace(rows * kn::kChunks);
    if (partials == nullptr) return;
    const unsigned grid = (unsigned)(rows * kn::kChunks);
    kn::{stats_kernel}<<<grid, kn::kThreads, 0, stream>>>({", ".join(names + ["packed", "partials"])});
    kn::{write_kernel}<<<grid, kn::kThreads, 0, stream>>>({", ".join(names + ["packed", "partials"])});
}}"""
    strategy = (f"{p.anchor.op} over rows split into {chunks} blocks of {threads} threads: a stats "
                f"kernel{kernels}; {vec}-element accesses")
    rows_hint = hint_int(p.problem.program, p.view.outer_dims)
    stat_bytes = stats.words * (4 if p.ctype == "float" else 8)
    launches = [Launch(k, (rows_hint * chunks, 1, 1), (threads, 1, 1), threads // 32 * stat_bytes)
                for k in (stats_kernel, write_kernel)]
    return rendered_kernel(sketch, point, name, strategy, device, launcher, params, launches)


# ---------------------------------------------------------------------------------------------
# A shared-memory row cache (rows too long for registers)

def row_cache_bytes(p: RowwisePlan, point: Point) -> int:
    """Dynamic shared memory for caching each of the block's rows (known row length)."""
    rows_per_block = point["threads"] // point["group"]
    return rows_per_block * (p.view.reduced_int or 0) * (8 if p.ctype == "double" else 4)

def row_cache_declaration(p: RowwisePlan) -> str:
    return (f"    extern __shared__ __align__(32) unsigned char row_cache_bytes[];\n"
            f"    {p.ctype}* const row_cache = reinterpret_cast<{p.ctype}*>(row_cache_bytes) +\n"
            f"                            (threadIdx.x / kGroup) * {p.view.reduced};   // this group's row\n")
