"""CUDA text for a plan: one `__global__` kernel per stage and the `extern "C"` launcher that
owns the workspace (one stream-ordered allocation, released after the last launch).

Schedules per stage: `map` (a thread per output element, grid-stride), `thread` (a thread per
output, serial loop over the reduction domain), `warp` (a warp per output, lanes stride the
domain, butterfly shuffles combine), `block` (a block per output, warp results combined through
shared memory), `scan` (a thread per line, in order along the scanned dimension).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..ir.graph import Node, Program
from ..sketches.base import Param, launcher_signature, numel_c, store_from_compute
from ..sketches.body import Body, Index, Source, linear
from .ctext import decompose, indent
from . import moments
from .plan import Plan
from .stages import Stage
from .tiled import hint_tiles, smem_bytes, tile_count, tiled_text
from .traffic import bytes_per_position

Held = dict[str, tuple[Node, tuple]]   # register array name -> (the input it holds, its index)
MIN_WORK_PER_WARP = 32        # a reduction domain smaller than a warp runs serially per thread
INT_LIMITS = {"max": "(-9223372036854775807LL - 1)", "min": "9223372036854775807LL"}


@dataclass(frozen=True)
class Schedule:
    threads: int
    strategy: str          # thread | warp | block: how a long reduction domain is split
    items: int             # outputs per thread (map and thread schedules)
    unroll: int            # unroll factor of the serial reduction loop
    tile: int = 0          # edge of the shared-memory output tile of GEMM-shaped stages; 0: off


@dataclass(frozen=True)
class Buffer:
    """A launcher-owned workspace array: a materialised node, or a split reduction's partials."""
    name: str
    c_type: str
    count: str                          # elements, a 64-bit C expression


@dataclass
class Context:
    name: str
    program: Program
    plan: Plan
    ctype: str
    sources: dict[int, Source]
    workspace: dict[int, str]           # id(node) → workspace pointer name
    buffers: list[Buffer]               # every workspace array, in allocation order
    sms: int                            # SMs of the target (how far a split reduction spreads)

    @property
    def signature(self) -> str:
        """The kernels' parameter list: the launcher's (but the stream), then the workspace."""
        params = [f"{p.c_type} __restrict__ {p.name}" if p.role != "symbol" else f"long long {p.name}"
                  for p in self.params]
        return ", ".join(params + [f"{b.c_type}* __restrict__ {b.name}" for b in self.buffers])

    @property
    def arguments(self) -> str:
        return ", ".join([p.name for p in self.params] + [b.name for b in self.buffers])

    params: list[Param] = field(default_factory=list)


def hint_extent(program: Program, dims: tuple) -> int:
    n = 1
    for d in program.concrete_shape(tuple(dims)):
        n *= d
    return n


def stage_schedule(stage: Stage, program: Program, schedule: Schedule) -> str:
    """The schedule one stage runs under: the token's strategy where its domain is long enough."""
    if stage.combine == "welford":
        return "moments"
    if schedule.tile and tileable(stage):
        return "tiled"
    if stage.scan_dim is not None:   # a thread walks a line, or a warp scans it 32 elements at a time
        return "scan" if schedule.strategy == "thread" else "scan_warp"
    if stage.combine is None:
        return "map"
    extent = hint_extent(program, stage.extents)
    if extent < MIN_WORK_PER_WARP:
        return "thread"
    if schedule.strategy in ("block", "split") and extent < 2 * schedule.threads:
        return "warp"
    return schedule.strategy


def tileable(stage: Stage) -> bool:
    """A floating sum of products the tiled schedule can stage through shared memory."""
    return stage.contraction is not None and stage.node.dtype.is_float


def split_chunks(stage: Stage, program: Program, schedule: Schedule, sms: int) -> int:
    """Blocks per output of a split reduction: enough to give every SM a few blocks, each with
    at least four passes of the block over its chunk."""
    outputs = hint_extent(program, stage.node.shape)
    extent = hint_extent(program, stage.extents)
    want = -(-4 * sms // max(1, outputs))
    return max(1, min(want, extent // (4 * schedule.threads), 1024))


def _acc_types(stage: Stage, ctype: str) -> str:
    return "long long" if stage.integer_terms else ctype


def _init(stage: Stage, ctype: str) -> str:
    combine = stage.combine or "sum"
    integer = stage.integer_terms
    if combine == "sum":
        return "0"
    if combine == "prod":
        return "1"
    kind = "max" if combine in ("max", "argmax") else "min"
    if integer:
        return INT_LIMITS[kind]
    return "-INFINITY" if kind == "max" else "INFINITY"


def _combine(combine: str, acc: str, acci: str, v: str, vi: str) -> str:
    if combine == "sum":
        return f"{acc} += {v};"
    if combine == "prod":
        return f"{acc} *= {v};"
    if combine == "max":
        return f"{acc} = ({v} > {acc} || {v} != {v}) ? {v} : {acc};"
    if combine == "min":
        return f"{acc} = ({v} < {acc} || {v} != {v}) ? {v} : {acc};"
    better = ">" if combine == "argmax" else "<"
    return f"if ({v} {better} {acc} || ({v} == {acc} && {vi} < {acci})) {{ {acc} = {v}; {acci} = {vi}; }}"


def _store(ctx: Context, stage: Stage, body: Body, idx: Index, value: str, last: bool) -> list[str]:
    node = stage.node
    if not last:
        return body.lines + [f"{ctx.workspace[id(node)]}[{body.linear_of(idx, node.shape)}] = {value};"]
    root = ctx.plan.root
    if ctx.plan.epilogue_of is node:
        body.bind(node, idx, value)
        value = body.value(root, idx)
    out = ctx.program.output_name
    stored = store_from_compute(root.dtype, value)
    return body.lines + [f"{out}[{body.linear_of(idx, root.shape)}] = {stored};"]


def _term_lines(ctx: Context, stage: Stage, idx: Index, ridx: Index, acc: str, acci: str,
                flat: str) -> list[str]:
    body = Body(ctx.ctype, ctx.sources, prefix="t")
    value = stage.term(body, idx, ridx)
    inner = body.lines + [_combine(stage.combine or "sum", acc, acci, value, flat)]
    skip = stage.skip(idx, ridx)
    if skip:
        return [f"if (!({skip})) {{", *indent(inner, 1), "}"]
    return inner


def _reduce_loop(ctx: Context, stage: Stage, idx: Index, start: str, step: str, unroll: int,
                 end: str | None = None) -> list[str]:
    """Domain positions [start, end) by `step` into dz_acc, in order. With `unroll` > 1, trips
    of `unroll` positions all in range run as straight-line copies with no bound check between
    them, so the scheduler issues every copy's loads before the first is used (loads in flight;
    a `#pragma unroll` of a loop with a run-time bound checks the bound between copies, and no
    load is hoisted above that branch); the rest run one at a time. The order of the additions is
    that of the plain loop."""
    end = end or numel_c(stage.extents)
    ridx = tuple(f"dz_r{k}" for k in range(len(stage.extents)))

    def position(at: str) -> list[str]:
        inner = [f"const long long dz_p = {at};"] + decompose("dz_p", list(ridx), stage.extents, "dz_rr")
        return ["{", *indent(inner + _term_lines(ctx, stage, idx, ridx, "dz_acc", "dz_acci", "dz_p"), 1), "}"]

    lines = [f"long long dz_r = {start};"]
    if unroll > 1:
        lines.append(f"for (; dz_r + {unroll - 1}LL * ({step}) < {end}; dz_r += {unroll}LL * ({step})) {{")
        for j in range(unroll):
            lines += indent(position("dz_r" if j == 0 else f"dz_r + {j}LL * ({step})"), 1)
        lines.append("}")
    return lines + [f"for (; dz_r < {end}; dz_r += {step}) {{", *indent(position("dz_r"), 1), "}"]


def _butterfly(stage: Stage) -> list[str]:
    arg = stage.combine in ("argmax", "argmin")
    lines = ["for (int dz_m = 16; dz_m > 0; dz_m >>= 1) {",
             "    const auto dz_v = __shfl_xor_sync(0xffffffffu, dz_acc, dz_m);",
             "    const long long dz_vi = "
             + ("__shfl_xor_sync(0xffffffffu, dz_acci, dz_m);" if arg else "0;"),
             "    " + _combine(stage.combine or "sum", "dz_acc", "dz_acci", "dz_v", "dz_vi"),
             "}"]
    return lines


def _finish(ctx: Context, stage: Stage, idx: Index, last: bool) -> list[str]:
    body = Body(ctx.ctype, ctx.sources, prefix="f")
    acc = "dz_acci" if stage.combine in ("argmax", "argmin") else "dz_acc"
    return _store(ctx, stage, body, idx, stage.finish(body, idx, acc), last)


def kernel_text(ctx: Context, stage: Stage, kernel: str, schedule: Schedule, last: bool) -> str:
    strategy = stage_schedule(stage, ctx.program, schedule)
    node = stage.node
    out_shape = tuple(s for k, s in enumerate(node.shape) if k != stage.scan_dim)
    idx_names = [f"dz_i{k}" for k in range(node.rank)]
    out_names = [n for k, n in enumerate(idx_names) if k != stage.scan_dim]
    acc_t = _acc_types(stage, ctx.ctype)
    init = [f"{acc_t} dz_acc = {_init(stage, ctx.ctype)};", "long long dz_acci = 9223372036854775807LL;"]
    total = numel_c(out_shape)
    lines = [f"__global__ void __launch_bounds__({schedule.threads}) {kernel}({ctx.signature}) {{",
             f"    const long long dz_total = {total};"]
    if strategy in ("map", "thread", "scan"):
        head = ["for (long long dz_o = blockIdx.x * (long long)blockDim.x + threadIdx.x; dz_o < dz_total;",
                "     dz_o += (long long)gridDim.x * blockDim.x) {"]
        body = decompose("dz_o", out_names, out_shape, "dz_ro")
        if strategy == "map":
            b = Body(ctx.ctype, ctx.sources, prefix="m")
            b.know_linear(tuple(idx_names), node.shape, "dz_o")   # decomposed from dz_o just above
            body += _store(ctx, stage, b, tuple(idx_names), stage.term(b, tuple(idx_names), ()), last)
        elif strategy == "thread":
            body += init + _reduce_loop(ctx, stage, tuple(idx_names), "0", "1", schedule.unroll)
            body += _finish(ctx, stage, tuple(idx_names), last)
        else:
            d = stage.scan_dim
            length = numel_c((node.shape[d],))
            body += init + [f"for (long long dz_i{d} = 0; dz_i{d} < {length}; ++dz_i{d}) {{"]
            t = Body(ctx.ctype, ctx.sources, prefix="t")
            value = stage.term(t, tuple(idx_names), ())
            step = t.lines + [_combine(stage.combine or "sum", "dz_acc", "dz_acci", value, "0")]
            f = Body(ctx.ctype, ctx.sources, prefix="f")
            step += _store(ctx, stage, f, tuple(idx_names), "dz_acc", last)
            body += indent(step, 1) + ["}"]
        lines += indent(head + indent(body, 1) + ["}"], 1)
    elif strategy == "scan_warp":
        lines += indent(_warp_scan(ctx, stage, idx_names, out_names, out_shape, acc_t, last), 1)
    elif strategy == "warp":
        head = ["const int dz_lane = threadIdx.x & 31;",
                "const long long dz_warps = (long long)gridDim.x * (blockDim.x >> 5);",
                "for (long long dz_o = blockIdx.x * (long long)(blockDim.x >> 5) + (threadIdx.x >> 5);"
                " dz_o < dz_total; dz_o += dz_warps) {"]
        body = decompose("dz_o", out_names, out_shape, "dz_ro") + init
        body += _reduce_loop(ctx, stage, tuple(idx_names), "dz_lane", "32", schedule.unroll)
        body += _butterfly(stage) + ["if (dz_lane == 0) {"]
        body += indent(_finish(ctx, stage, tuple(idx_names), last), 1) + ["}"]
        lines += indent(head + indent(body, 1) + ["}"], 1)
    else:   # block
        head = [f"__shared__ {acc_t} dz_part[32];", "__shared__ long long dz_parti[32];",
                "const int dz_lane = threadIdx.x & 31, dz_warp = threadIdx.x >> 5;",
                "for (long long dz_o = blockIdx.x; dz_o < dz_total; dz_o += gridDim.x) {"]
        body = decompose("dz_o", out_names, out_shape, "dz_ro") + init
        body += _reduce_loop(ctx, stage, tuple(idx_names), "threadIdx.x", "blockDim.x", schedule.unroll)
        body += _butterfly(stage)
        body += ["if (dz_lane == 0) { dz_part[dz_warp] = dz_acc; dz_parti[dz_warp] = dz_acci; }",
                 "__syncthreads();", "if (dz_warp == 0) {",
                 f"    dz_acc = dz_lane < (int)(blockDim.x >> 5) ? dz_part[dz_lane]"
                 f" : ({acc_t})({_init(stage, ctx.ctype)});",
                 "    dz_acci = dz_lane < (int)(blockDim.x >> 5) ? dz_parti[dz_lane]"
                 " : 9223372036854775807LL;"]
        body += indent(_butterfly(stage) + ["if (dz_lane == 0) {"]
                        + indent(_finish(ctx, stage, tuple(idx_names), last), 1) + ["}"], 1)
        body += ["}", "__syncthreads();"]
        lines += indent(head + indent(body, 1) + ["}"], 1)
    return "\n".join(lines + ["}"])


def _warp_scan(ctx: Context, stage: Stage, idx_names: list[str], out_names: list[str], out_shape: tuple,
               acc_t: str, last: bool) -> list[str]:
    """A warp per line: 32 consecutive elements per step (coalesced along a last-axis scan),
    an in-warp inclusive scan by shuffles, plus the carry of the steps before."""
    d = stage.scan_dim
    assert d is not None
    op = "+" if stage.combine == "sum" else "*"
    init = _init(stage, ctx.ctype)
    head = ["const int dz_lane = threadIdx.x & 31;",
            "const long long dz_warps = (long long)gridDim.x * (blockDim.x >> 5);",
            "for (long long dz_o = blockIdx.x * (long long)(blockDim.x >> 5) + (threadIdx.x >> 5);"
            " dz_o < dz_total; dz_o += dz_warps) {"]
    body = decompose("dz_o", out_names, out_shape, "dz_ro")
    length = numel_c((stage.node.shape[d],))
    t = Body(ctx.ctype, ctx.sources, prefix="t")
    value = stage.term(t, tuple(idx_names), ())
    f = Body(ctx.ctype, ctx.sources, prefix="f")
    store = _store(ctx, stage, f, tuple(idx_names), "dz_acc", last)
    body += [f"{acc_t} dz_carry = {init};",
             f"for (long long dz_base = 0; dz_base < {length}; dz_base += 32) {{",
             f"    const long long dz_i{d} = dz_base + dz_lane;",
             f"    {acc_t} dz_acc = {init};",
             f"    if (dz_i{d} < {length}) {{", *indent(t.lines + [f"dz_acc = {value};"], 2), "    }",
             "    for (int dz_m = 1; dz_m < 32; dz_m <<= 1) {",
             "        const auto dz_v = __shfl_up_sync(0xffffffffu, dz_acc, dz_m);",
             f"        if (dz_lane >= dz_m) dz_acc = dz_v {op} dz_acc;",
             "    }",
             f"    dz_acc = dz_carry {op} dz_acc;",
             f"    if (dz_i{d} < {length}) {{", *indent(store, 2), "    }",
             "    dz_carry = __shfl_sync(0xffffffffu, dz_acc, 31);",
             "}"]
    return head + indent(body, 1) + ["}"]


def per_block(strategy: str, schedule: Schedule) -> int:
    """Outputs (lines, for scans) one block covers in one pass of its grid."""
    return {"map": schedule.threads * schedule.items, "thread": schedule.threads * schedule.items,
            "scan": schedule.threads, "scan_warp": schedule.threads // 32, "warp": schedule.threads // 32,
            "block": 1, "split": 1}[strategy]


def launcher_text(ctx: Context, params: list[Param], launches: list[tuple[str, str, int]],
                  schedule: Schedule) -> str:
    """The launcher: one stream-ordered allocation for every buffer, the launches in order
    (kernel, the work it spreads over, items per block), the allocation released after them."""
    lines = [launcher_signature(ctx.name, params) + " {"]
    if ctx.buffers:
        lines.append("    long long dz_bytes = 0;")
        for b in ctx.buffers:
            lines += [f"    const long long {b.name}_at = dz_bytes;",
                      f"    dz_bytes += ({b.count} * (long long)sizeof({b.c_type}) + 255) / 256 * 256;"]
        lines += ["    unsigned char* dz_ws = nullptr;",
                  "    if (cudaMallocAsync(reinterpret_cast<void**>(&dz_ws), (size_t)dz_bytes, stream)"
                  " != cudaSuccess) return;"]
        lines += [f"    {b.c_type}* {b.name} = reinterpret_cast<{b.c_type}*>(dz_ws + {b.name}_at);"
                  for b in ctx.buffers]
    for kernel, work, per in launches:
        grid = f"dim3((unsigned)dice_{ctx.name}::dz_blocks({work}, {per}))"
        lines.append(f"    dice_{ctx.name}::{kernel}<<<{grid}, "
                     f"dim3({schedule.threads}), 0, stream>>>({ctx.arguments});")
    if ctx.buffers:
        lines.append("    cudaFreeAsync(dz_ws, stream);")
    return "\n".join(lines + ["}"])


@dataclass(frozen=True)
class KernelPlan:
    """One kernel of the rendered plan: its text and how the launcher spreads it."""
    name: str
    text: str
    work: str          # items the grid covers (a 64-bit C expression)
    per_block: int     # items per block in one pass of the grid
    hint_blocks: int   # blocks at the hint sizes (for the cost model)
    smem_bytes: int
    bytes_in_flight: int | None = None   # loads a thread issues per trip of its reduction loop


def split_text(ctx: Context, stage: Stage, k: int, kernel: str, schedule: Schedule, chunks: int,
               last: bool) -> tuple[str, str]:
    """A long reduction over few outputs in two kernels: `chunks` blocks per output each reduce
    a slice of the domain into partials, then a warp per output merges them in order."""
    node = stage.node
    idx_names = tuple(f"dz_i{d}" for d in range(node.rank))
    acc_t = _acc_types(stage, ctx.ctype)
    init = _init(stage, ctx.ctype)
    extent = numel_c(stage.extents)
    part = [f"__global__ void __launch_bounds__({schedule.threads}) {kernel}({ctx.signature}) {{",
            f"    __shared__ {acc_t} dz_part[32];", "    __shared__ long long dz_parti[32];",
            "    const int dz_lane = threadIdx.x & 31, dz_warp = threadIdx.x >> 5;",
            f"    const long long dz_total = {numel_c(node.shape)} * {chunks}LL;",
            f"    const long long dz_chunk = ({extent} + {chunks - 1}LL) / {chunks}LL;",
            "    for (long long dz_b = blockIdx.x; dz_b < dz_total; dz_b += gridDim.x) {"]
    body = [f"const long long dz_o = dz_b / {chunks}LL, dz_c = dz_b % {chunks}LL;",
            f"const long long dz_end = (dz_c + 1) * dz_chunk < {extent} ? (dz_c + 1) * dz_chunk : {extent};"]
    body += decompose("dz_o", list(idx_names), node.shape, "dz_ro")
    body += [f"{acc_t} dz_acc = {init};", "long long dz_acci = 9223372036854775807LL;"]
    body += _reduce_loop(ctx, stage, idx_names, "dz_c * dz_chunk + threadIdx.x", "blockDim.x",
                         schedule.unroll, "dz_end")
    body += _butterfly(stage)
    body += ["if (dz_lane == 0) { dz_part[dz_warp] = dz_acc; dz_parti[dz_warp] = dz_acci; }",
             "__syncthreads();", "if (dz_warp == 0) {",
             f"    dz_acc = dz_lane < (int)(blockDim.x >> 5) ? dz_part[dz_lane] : ({acc_t})({init});",
             "    dz_acci = dz_lane < (int)(blockDim.x >> 5) ? dz_parti[dz_lane] : 9223372036854775807LL;"]
    publish = f"if (dz_lane == 0) {{ dz_pv{k}[dz_b] = dz_acc; dz_pi{k}[dz_b] = dz_acci; }}"
    body += indent(_butterfly(stage) + [publish], 1)
    body += ["}", "__syncthreads();"]
    part += indent(body, 2) + ["    }", "}"]
    merge = [f"__global__ void __launch_bounds__({schedule.threads}) {kernel}_merge({ctx.signature}) {{",
             f"    const long long dz_total = {numel_c(node.shape)};",
             "    const int dz_lane = threadIdx.x & 31;",
             "    const long long dz_warps = (long long)gridDim.x * (blockDim.x >> 5);",
             "    for (long long dz_o = blockIdx.x * (long long)(blockDim.x >> 5) + (threadIdx.x >> 5);"
             " dz_o < dz_total; dz_o += dz_warps) {"]
    body = decompose("dz_o", list(idx_names), node.shape, "dz_ro")
    body += [f"{acc_t} dz_acc = {init};", "long long dz_acci = 9223372036854775807LL;",
             f"for (long long dz_c = dz_lane; dz_c < {chunks}LL; dz_c += 32) {{",
             f"    const {acc_t} dz_v = dz_pv{k}[dz_o * {chunks}LL + dz_c];",
             f"    const long long dz_vi = dz_pi{k}[dz_o * {chunks}LL + dz_c];",
             "    " + _combine(stage.combine or "sum", "dz_acc", "dz_acci", "dz_v", "dz_vi"), "}"]
    body += _butterfly(stage) + ["if (dz_lane == 0) {"]
    body += indent(_finish(ctx, stage, idx_names, last), 1) + ["}"]
    merge += indent(body, 2) + ["    }", "}"]
    return "\n".join(part), "\n".join(merge)


def plan_kernels(ctx: Context, schedule: Schedule, chunks: dict[int, int]) -> list[KernelPlan]:
    """Every kernel of the plan in launch order (a split stage contributes two, a moments stage
    cut into slices too)."""
    out = []
    for k, stage in enumerate(ctx.plan.stages):
        last = k == len(ctx.plan.stages) - 1
        kernel = f"{ctx.name}_k{k}"
        strategy = stage_schedule(stage, ctx.program, schedule)
        position = bytes_per_position(ctx.plan, stage, 8 if ctx.ctype == "double" else 4)
        if strategy == "moments":
            target = ctx.program.output_name if last else ctx.workspace[id(stage.node)]
            parts = moments.kernels(stage, ctx.program, ctx.signature, ctx.ctype, ctx.sources, kernel,
                                    schedule.threads, schedule.items, chunks[k], target, f"dz_pw{k}")
            pass_over_data = parts[0].name
            out += [KernelPlan(m.name, m.text, m.work, m.per_block, m.hint_blocks, m.smem_bytes,
                               position * schedule.items if m.name == pass_over_data else None)
                    for m in parts]
            continue
        shape = tuple(s for d, s in enumerate(stage.node.shape) if d != stage.scan_dim)
        outputs = hint_extent(ctx.program, shape)
        if strategy == "tiled":
            def store(idx: Index, acc: str, stage: Stage = stage, last: bool = last) -> list[str]:
                body = Body(ctx.ctype, ctx.sources, prefix="f")
                return _store(ctx, stage, body, idx, stage.finish(body, idx, acc), last)
            text = tiled_text(ctx.signature, ctx.ctype, ctx.sources, stage, kernel, schedule.tile,
                              schedule.threads, store)
            out.append(KernelPlan(kernel, text, tile_count(stage, schedule.tile), 1,
                                  max(1, min(hint_tiles(stage, ctx.program, schedule.tile), 2 ** 31 - 1)),
                                  smem_bytes(schedule.tile, 8 if ctx.ctype == "double" else 4)))
            continue
        if strategy == "split":
            c = chunks[k]
            part, merge = split_text(ctx, stage, k, kernel, schedule, c, last)
            out.append(KernelPlan(kernel, part, f"{numel_c(shape)} * {c}LL", 1, min(outputs * c, 2 ** 31 - 1),
                                  32 * 16, position * schedule.unroll))
            per = schedule.threads // 32
            out.append(KernelPlan(f"{kernel}_merge", merge, numel_c(shape), per,
                                  max(1, -(-outputs // per)), 0))
            continue
        per = per_block(strategy, schedule)
        loops = strategy in ("thread", "warp", "block")    # a reduction loop (not a map or a scan)
        out.append(KernelPlan(kernel, kernel_text(ctx, stage, kernel, schedule, last), numel_c(shape), per,
                              max(1, min(-(-outputs // per), 2 ** 31 - 1)),
                              32 * 16 if strategy == "block" else 0,
                              position * schedule.unroll if loops else None))
    return out


BLOCKS_HELPER = """\
// Blocks for `work` items at `per` items per block (at least one, at most the grid's x limit).
static inline long long dz_blocks(long long work, long long per) {
    const long long blocks = (work + per - 1) / per;
    return blocks < 1 ? 1 : (blocks > 2147483647LL ? 2147483647LL : blocks);
}"""


def _block_combine(stage: Stage, acc_t: str, ctype: str) -> list[str]:
    """The block's partial results combined into warp 0's lane 0 (`dz_acc`)."""
    return _butterfly(stage) + [
        "if (dz_lane == 0) dz_part[dz_warp] = dz_acc;", "__syncthreads();",
        f"dz_acc = dz_lane < (int)(blockDim.x >> 5) ? dz_part[dz_lane] : ({acc_t})({_init(stage, ctype)});",
    ] + _butterfly(stage)


def _bound_statistics(ctx: Context, prefix: str, upto: int, group: list[str],
                      place: Callable[[int], str], held: Held | None = None) -> Body:
    """A body in which the first `upto` statistics read as `place(j)` at the group's index, and
    each `held` input (register array name: the node, its index) reads from its registers."""
    b = Body(ctx.ctype, ctx.sources, prefix=prefix)
    for j in range(upto):
        b.bind(ctx.plan.stages[j].node, tuple(group), place(j))
    for array, (node, idx) in (held or {}).items():
        b.bind(node, idx, f"{array}[dz_r]")
    return b


def _group_parts(ctx: Context) -> tuple:
    """(statistics stages, group index names, group shape, reduction index names, the input's
    full index, reduction extents) of the one-kernel normalisation."""
    stats = ctx.plan.stages[:-1]
    x = stats[0].node.args[0]
    dims = stats[0].node.attr("dim")
    group = [f"dz_i{k}" for k in range(x.rank)]
    ridx = tuple(f"dz_r{k}" for k in range(len(dims)))
    full = tuple(ridx[dims.index(d)] if d in dims else group[d] for d in range(x.rank))
    return stats, group, stats[0].node.shape, ridx, full, tuple(x.shape[d] for d in dims)


def _output_lines(ctx: Context, group: list[str], ridx: tuple, full: tuple, extents: tuple,
                  place: Callable[[int], str], held: Held | None = None) -> list[str]:
    """One output element at reduction position dz_r of the group, the statistics bound."""
    m = _bound_statistics(ctx, "m", len(ctx.plan.stages) - 1, group, place, held)
    value = m.value(ctx.plan.root, full)
    inner = decompose("dz_r", list(ridx), extents, "dz_rr") + m.lines
    stored = store_from_compute(ctx.plan.root.dtype, value)
    return inner + [f"{ctx.program.output_name}[{linear(full, ctx.plan.root.shape)}] = {stored};"]


def fused_block_text(ctx: Context, kernel: str, schedule: Schedule) -> str:
    """The whole normalisation in one kernel: a block per group (the kept-dims index of the
    reductions) computes each statistic in turn into shared memory, then writes the group's
    outputs; the group's elements are re-read from cache, not from a workspace."""
    stats, group, group_shape, ridx, full, extents = _group_parts(ctx)
    dims = stats[0].node.attr("dim")
    lines = [f"__global__ void __launch_bounds__({schedule.threads}) {kernel}({ctx.signature}) {{",
             f"    __shared__ {ctx.ctype} dz_part[32];", f"    __shared__ {ctx.ctype} dz_stat[{len(stats)}];",
             "    const int dz_lane = threadIdx.x & 31, dz_warp = threadIdx.x >> 5;",
             f"    const long long dz_total = {numel_c(group_shape)};",
             "    for (long long dz_o = blockIdx.x; dz_o < dz_total; dz_o += gridDim.x) {"]
    body = decompose("dz_o", group, group_shape, "dz_ro")
    shared = "dz_stat[{}]".format
    loop = f"for (long long dz_r = threadIdx.x; dz_r < {numel_c(extents)}; dz_r += blockDim.x) {{"
    for j, stage in enumerate(stats):
        body += [f"{{   // statistic {j}: {stage.node.op} over dims {list(dims)}",
                 f"    {ctx.ctype} dz_acc = {_init(stage, ctx.ctype)};", "    long long dz_acci = 0;",
                 "    " + loop]
        t = _bound_statistics(ctx, "t", j, group, shared)
        value = stage.term(t, tuple(group), ridx)
        inner = decompose("dz_r", list(ridx), extents, "dz_rr") + t.lines
        inner.append(_combine(stage.combine or "sum", "dz_acc", "dz_acci", value, "dz_r"))
        body += indent(inner, 2) + ["    }"]
        body += indent(_block_combine(stage, ctx.ctype, ctx.ctype), 1)
        f = Body(ctx.ctype, ctx.sources, prefix="f")
        body += indent(["if (threadIdx.x == 0) {", *indent(f.lines, 1),
                         f"    dz_stat[{j}] = {stage.finish(f, tuple(group), 'dz_acc')};", "}",
                         "__syncthreads();"], 1) + ["}"]
    body += [loop] + indent(_output_lines(ctx, group, ridx, full, extents, shared), 1)
    body += ["}", "__syncthreads();"]
    lines += indent(body, 2) + ["    }", "}"]
    return "\n".join(lines)


def held_inputs(plan: Plan) -> list[Node]:
    """Inputs the one-kernel normalisation reads at the full index of its statistics' argument
    (x itself, not a per-channel weight): what a thread keeps in registers."""
    x = plan.stages[0].node.args[0]
    seen: dict[int, Node] = {}
    for n in plan.root.walk():
        if n.op == "input" and n.shape == x.shape:
            seen.setdefault(id(n), n)
    return list(seen.values())


def fused_thread_text(ctx: Context, kernel: str, schedule: Schedule, in_registers: bool) -> str:
    """The whole normalisation in one kernel with a thread per group (`plan.thread_fusable`: the
    contiguous axis is kept): consecutive threads take consecutive groups, so each pass is a
    coalesced sweep of the block's groups, and a thread keeps its statistics in registers. With
    `in_registers` (a short group, `plan.REGISTER_GROUP`) the thread first loads its whole group
    into registers (a fully unrolled loop: every load in flight at once) and every pass reads
    them; otherwise each pass re-reads the group (from DRAM: measured on an H100, 256 threads'
    groups of 64 floats did not stay in cache between passes)."""
    stats, group, group_shape, ridx, full, extents = _group_parts(ctx)
    dims = stats[0].node.attr("dim")
    held = {f"dz_v{k}": (n, full) for k, n in enumerate(held_inputs(ctx.plan))} if in_registers else {}
    pragma = "#pragma unroll" if in_registers else (
        f"#pragma unroll {schedule.unroll}" if schedule.unroll > 1 else "")
    loop = ([pragma] if pragma else []) + [f"for (long long dz_r = 0; dz_r < {numel_c(extents)}; ++dz_r) {{"]
    register = "dz_stat{}".format
    body = decompose("dz_o", group, group_shape, "dz_ro")
    for array, (node, idx) in held.items():
        load = Body(ctx.ctype, ctx.sources, prefix="l")
        value = load.value(node, idx)
        body += [f"{ctx.ctype} {array}[{numel_c(extents)}];", *loop,
                 *indent(decompose("dz_r", list(ridx), extents, "dz_rr") + load.lines, 1),
                 f"    {array}[dz_r] = {value};", "}"]
    for j, stage in enumerate(stats):
        t = _bound_statistics(ctx, "t", j, group, register, held)
        value = stage.term(t, tuple(group), ridx)
        inner = decompose("dz_r", list(ridx), extents, "dz_rr") + t.lines
        inner.append(_combine(stage.combine or "sum", "dz_acc", "dz_acci", value, "dz_r"))
        f = Body(ctx.ctype, ctx.sources, prefix="f")
        finish = stage.finish(f, tuple(group), "dz_acc")
        body += [f"{ctx.ctype} dz_stat{j};", f"{{   // statistic {j}: {stage.node.op} over dims {list(dims)}",
                 f"    {ctx.ctype} dz_acc = {_init(stage, ctx.ctype)};", "    long long dz_acci = 0;",
                 *indent(loop, 1), *indent(inner, 2), "    }", *indent(f.lines, 1),
                 f"    dz_stat{j} = {finish};", "}"]
    body += loop + indent(_output_lines(ctx, group, ridx, full, extents, register, held), 1) + ["}"]
    lines = [f"__global__ void __launch_bounds__({schedule.threads}) {kernel}({ctx.signature}) {{",
             f"    const long long dz_total = {numel_c(group_shape)};",
             "    for (long long dz_o = blockIdx.x * (long long)blockDim.x + threadIdx.x; dz_o < dz_total;",
             "         dz_o += (long long)gridDim.x * blockDim.x) {", *indent(body, 2), "    }", "}"]
    return "\n".join(lines)


def fused_launcher_text(ctx: Context, params: list[Param], kernel: str, schedule: Schedule,
                        per_block: int) -> str:
    """The launch of the one-kernel normalisation: `per_block` groups per block (1: a block per
    group; the block's threads: a thread per group)."""
    groups = numel_c(ctx.plan.stages[0].node.shape)
    return "\n".join([launcher_signature(ctx.name, params) + " {",
                      f"    dice_{ctx.name}::{kernel}<<<"
                      f"dim3((unsigned)dice_{ctx.name}::dz_blocks({groups}, {per_block})), "
                      f"dim3({schedule.threads}), 0, stream>>>({ctx.arguments});", "}"])
