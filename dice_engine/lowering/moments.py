"""The `moments` stage (mean and biased variance over any set of axes, adjacent or not) in one
pass over its argument: Welford's update per thread, Chan's merge of (count, mean, M2) between
threads, warps, blocks and slices, so there is neither a second read nor E[x²] − E[x]²
cancellation.

Each thread takes `items` positions per round (loads in flight together), reduces them in
registers and merges the round's (count, mean, M2): one division per round. Two layouts,
picked by which axis is contiguous in memory:
- `block`: the argument's last axis is reduced (per channel over N, H, W of NCHW) over more than
  a few dozen elements: a block per (output, slice), consecutive threads on consecutive elements
  of the domain (coalesced);
- `thread`: the last axis is kept (per column over rows of a GEMM's output), or the reduction is
  short: a thread per (output, slice), consecutive threads on consecutive outputs, each walking
  its slice.
`slices` > 1 cuts the domain into that many slices whose partials a second kernel merges in
order (a thread per output), so few outputs still fill the GPU.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.graph import Program
from ..sketches.base import numel_c, store_from_compute
from ..sketches.body import Body, Source
from .ctext import decompose, indent
from .stages import Stage

MAX_SLICES = 1024
MIN_PER_THREAD = 16           # domain elements per thread per slice below which slicing stops
MAX_THREAD_EXTENT = 64        # longest contiguous reduction a thread walks alone (256 bytes of f32)


@dataclass(frozen=True)
class MomentsKernel:
    name: str
    text: str
    work: str             # items the grid covers (64-bit C expression)
    per_block: int
    hint_blocks: int
    smem_bytes: int


def _extent(program: Program, shape: tuple) -> int:
    n = 1
    for d in program.concrete_shape(tuple(shape)):
        n *= d
    return n


def layout(stage: Stage) -> str:
    """`block` when the argument's contiguous (last) axis is reduced over more than
    `MAX_THREAD_EXTENT` elements, else `thread`: a block per output that reduces 16 elements
    (group norm over 512 groups of a GEMM's 8192 columns) would leave most of its threads idle,
    where a thread reading its 64 contiguous bytes keeps every sector it fetches in use."""
    x = stage.node.args[0]
    if x.rank - 1 not in stage.node.attr("dim"):
        return "thread"
    extent = 1
    for d in stage.extents:
        if not isinstance(d, int):
            return "block"   # a symbolic size: assume a long reduction
        extent *= d
    return "block" if extent > MAX_THREAD_EXTENT else "thread"


def slices_for(stage: Stage, program: Program, threads: int, sms: int, token: int) -> int:
    """Slices of the domain: the token's, or (0) enough (output, slice) blocks to give every SM
    four, each thread still walking at least MIN_PER_THREAD elements."""
    outputs = _extent(program, stage.node.shape[1:])
    extent = _extent(program, stage.extents)
    if layout(stage) == "block":
        blocks, cap = outputs, extent // (MIN_PER_THREAD * threads)
    else:
        blocks, cap = -(-outputs // threads), extent // MIN_PER_THREAD
    if token:
        return max(1, min(token, extent, MAX_SLICES))
    return max(1, min(-(-4 * sms // max(1, blocks)), cap, MAX_SLICES))


def merge_helper(ctype: str) -> str:
    return f"""\
// Chan's parallel merge of (count, mean, M2) partials: exact in the counts, no cancellation.
__device__ __forceinline__ void dz_merge({ctype}& n, {ctype}& mean, {ctype}& m2,
                                         {ctype} nb, {ctype} meanb, {ctype} m2b) {{
    const {ctype} total = n + nb;
    if (nb == ({ctype})0) return;
    const {ctype} d = meanb - mean, wb = nb / total;
    mean += d * wb;
    m2 += m2b + d * d * n * wb;
    n = total;
}}"""


def _publish(stage: Stage, target: str, ctype: str, slices: int, partials: str, outputs: str) -> list[str]:
    """(count, mean, M2) of output dz_o, slice dz_c: to the partials, or (one slice) the mean
    and variance to the target (mean at [o], variance at [outputs + o])."""
    if slices > 1:
        at = f"dz_c * {outputs} + dz_o"
        return [f"{partials}[{at}] = dz_n;", f"{partials}[{slices}LL * {outputs} + {at}] = dz_mean;",
                f"{partials}[{2 * slices}LL * {outputs} + {at}] = dz_m2;"]
    return _final(stage, target, ctype, outputs)


def _final(stage: Stage, target: str, ctype: str, outputs: str) -> list[str]:
    dtype = stage.node.dtype
    return [f"{target}[dz_o] = {store_from_compute(dtype, 'dz_mean')};",
            f"{target}[{outputs} + dz_o] = "
            f"{store_from_compute(dtype, f'(dz_n > ({ctype})0 ? dz_m2 / dz_n : ({ctype})NAN)')};"]


def _walk(stage: Stage, ctype: str, sources: dict[int, Source], start: str, end: str, step: str,
          items: int) -> list[str]:
    """Domain positions [start, end) by `step`, output index dz_i*: `items` positions per round
    loaded together (independent loads in flight), their mean and M2 taken in registers (two
    passes over the registers), then merged into the running (count, mean, M2): one division
    per round, not per element."""
    node = stage.node
    idx = tuple(f"dz_i{d}" for d in range(node.rank - 1))
    ridx = tuple(f"dz_r{j}" for j in range(len(stage.extents)))
    body = Body(ctype, sources, prefix="t")
    value = stage.term(body, idx, ridx)
    load = decompose("dz_r", list(ridx), stage.extents, "dz_rr") + body.lines + [f"dz_x[dz_j] = {value};"]
    zero = f"({ctype})0"
    return [f"for (long long dz_base = {start}; dz_base < {end}; dz_base += {step} * {items}LL) {{",
            f"    {ctype} dz_x[{items}];",
            f"    {ctype} dz_s = {zero}, dz_q = {zero};",
            "    int dz_k = 0;   // positions in range: a prefix of the round",
            "    #pragma unroll",
            f"    for (int dz_j = 0; dz_j < {items}; ++dz_j) {{",
            f"        const long long dz_r = dz_base + dz_j * (long long)({step});",
            f"        if (dz_r < {end}) {{",
            *indent(load, 3), "            dz_s += dz_x[dz_j];", "            ++dz_k;", "        }", "    }",
            f"    const {ctype} dz_lm = dz_s / ({ctype})dz_k;",
            "    #pragma unroll",
            f"    for (int dz_j = 0; dz_j < {items}; ++dz_j) {{",
            "        if (dz_j < dz_k) dz_q += (dz_x[dz_j] - dz_lm) * (dz_x[dz_j] - dz_lm);", "    }",
            f"    dz_merge(dz_n, dz_mean, dz_m2, ({ctype})dz_k, dz_lm, dz_q);", "}"]


def kernels(stage: Stage, program: Program, signature: str, ctype: str, sources: dict[int, Source],
            kernel: str, threads: int, items: int, slices: int, target: str,
            partials: str) -> list[MomentsKernel]:
    """The stage's kernels: the pass over the data, then (slices > 1) the merge."""
    node = stage.node
    kept = node.shape[1:]
    outputs = numel_c(kept)
    extent = numel_c(stage.extents)
    idx = [f"dz_i{d}" for d in range(node.rank - 1)]
    n_out = _extent(program, kept)
    zero = f"({ctype})0"
    state = [f"{ctype} dz_n = {zero}, dz_mean = {zero}, dz_m2 = {zero};"]
    head = [f"__global__ void __launch_bounds__({threads}) {kernel}({signature}) {{",
            f"    const long long dz_chunk = ({extent} + {slices - 1}LL) / {slices}LL;"]
    bounds = ["const long long dz_lo = dz_c * dz_chunk;",
              f"const long long dz_hi = dz_lo + dz_chunk < {extent} ? dz_lo + dz_chunk : {extent};"]
    out: list[MomentsKernel] = []
    if layout(stage) == "block":
        shuffle = ["for (int dz_m = 16; dz_m > 0; dz_m >>= 1) {",
                   "    const auto dz_on = __shfl_xor_sync(0xffffffffu, dz_n, dz_m);",
                   "    const auto dz_om = __shfl_xor_sync(0xffffffffu, dz_mean, dz_m);",
                   "    const auto dz_oq = __shfl_xor_sync(0xffffffffu, dz_m2, dz_m);",
                   "    dz_merge(dz_n, dz_mean, dz_m2, dz_on, dz_om, dz_oq);", "}"]
        body = [f"const long long dz_o = dz_b % {outputs}, dz_c = dz_b / {outputs};", *bounds]
        body += decompose("dz_o", idx, kept, "dz_ro") + state
        body += _walk(stage, ctype, sources, "dz_lo + threadIdx.x", "dz_hi", "blockDim.x", items) + shuffle
        body += ["if (dz_lane == 0) {",
                 "    dz_sn[dz_warp] = dz_n; dz_sm[dz_warp] = dz_mean; dz_sq[dz_warp] = dz_m2;", "}",
                 "__syncthreads();", "if (dz_warp == 0) {",
                 "    const bool dz_in = dz_lane < (int)(blockDim.x >> 5);",
                 f"    dz_n = dz_in ? dz_sn[dz_lane] : {zero};",
                 f"    dz_mean = dz_in ? dz_sm[dz_lane] : {zero};",
                 f"    dz_m2 = dz_in ? dz_sq[dz_lane] : {zero};"]
        body += indent(shuffle + ["if (dz_lane == 0) {"]
                       + indent(_publish(stage, target, ctype, slices, partials, outputs), 1) + ["}"], 1)
        body += ["}", "__syncthreads();"]
        text = head + [f"    __shared__ {ctype} dz_sn[32], dz_sm[32], dz_sq[32];",
                       "    const int dz_lane = threadIdx.x & 31, dz_warp = threadIdx.x >> 5;",
                       f"    for (long long dz_b = blockIdx.x; dz_b < {outputs} * {slices}LL;"
                       " dz_b += gridDim.x) {", *indent(body, 2), "    }", "}"]
        smem = 3 * 32 * (8 if ctype == "double" else 4)
        out.append(MomentsKernel(kernel, "\n".join(text), f"{outputs} * {slices}LL", 1,
                                 max(1, min(n_out * slices, 2 ** 31 - 1)), smem))
    else:
        body = [f"const long long dz_o = dz_w % {outputs}, dz_c = dz_w / {outputs};", *bounds]
        body += decompose("dz_o", idx, kept, "dz_ro") + state
        body += _walk(stage, ctype, sources, "dz_lo", "dz_hi", "1", items)
        body += _publish(stage, target, ctype, slices, partials, outputs)
        text = head + [f"    for (long long dz_w = blockIdx.x * (long long)blockDim.x + threadIdx.x;"
                       f" dz_w < {outputs} * {slices}LL; dz_w += (long long)gridDim.x * blockDim.x) {{",
                       *indent(body, 2), "    }", "}"]
        out.append(MomentsKernel(kernel, "\n".join(text), f"{outputs} * {slices}LL", threads,
                                 max(1, min(-(-n_out * slices // threads), 2 ** 31 - 1)), 0))
    if slices > 1:
        mean_at = f"{partials}[{slices}LL * {outputs} + dz_at]"
        m2_at = f"{partials}[{2 * slices}LL * {outputs} + dz_at]"
        merge = [f"__global__ void __launch_bounds__({threads}) {kernel}_merge({signature}) {{",
                 "    for (long long dz_o = blockIdx.x * (long long)blockDim.x + threadIdx.x;"
                 f" dz_o < {outputs}; dz_o += (long long)gridDim.x * blockDim.x) {{", *indent(state, 2),
                 f"        for (long long dz_c = 0; dz_c < {slices}LL; ++dz_c) {{",
                 f"            const long long dz_at = dz_c * {outputs} + dz_o;",
                 f"            dz_merge(dz_n, dz_mean, dz_m2, {partials}[dz_at], {mean_at}, {m2_at});",
                 "        }", *indent(_final(stage, target, ctype, outputs), 2), "    }", "}"]
        out.append(MomentsKernel(f"{kernel}_merge", "\n".join(merge), outputs, threads,
                                 max(1, -(-n_out // threads)), 0))
    return out
