"""Each materialised operator as a stage: an output index space, an optional reduction domain
and the scalar term summed/maxed/... over it (TVM's compute with reduce axes, in miniature).

A matmul is a sum over K, a convolution a sum over input channels × kernel taps (skipping taps
that fall into padding or between strides of a transposed one), a pool a max/mean over its
window, a reduction over any set of axes a combine over those axes. Scans (cumsum, cumprod) run
along one dimension. Every term is built through `Body`, so elementwise producers fuse in.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..ir.graph import Dim, Node
from ..ir.ops import CONVS, POOLS, REDUCTIONS, SCANS, STATISTICS, spatial_rank
from ..sketches.base import dim_c
from ..sketches.expr import literal
from ..sketches.body import Body, Index, broadcast_index

Term = Callable[[Body, Index, Index], str]
Skip = Callable[[Index, Index], "str | None"]
Finish = Callable[[Body, Index, str], str]

MATERIALISED = REDUCTIONS | STATISTICS | SCANS | CONVS | POOLS | {"matmul"}


def _no_skip(idx: Index, ridx: Index) -> str | None:
    return None


def _same(body: Body, idx: Index, acc: str) -> str:
    return acc


@dataclass(frozen=True)
class Contraction:
    """A sum of lhs × rhs products, read as a GEMM for the shared-memory tiled schedule: the
    output dims split into `batch` (both operands depend on them), `n_dim` (only the rhs does)
    and the rest, M (only the lhs does). `lhs`/`rhs` give an operand's value at (output index,
    domain index); they never read the other side's dims (those come in as "0"). `lhs_skip` is
    the condition under which an lhs term is left out (padding, transposed-conv gaps)."""
    batch: tuple[int, ...]
    n_dim: int
    lhs: Term
    rhs: Term
    lhs_skip: Skip = _no_skip
    lhs_k_fastest: bool = True          # load order of the lhs tile (its contiguous direction)
    rhs_k_fastest: bool = False


@dataclass
class Stage:
    node: Node
    combine: str | None                 # sum prod max min argmax argmin welford; None: a plain map
    extents: tuple[Dim, ...]            # the reduction domain (or the scanned extent)
    term: Term                          # the value combined (or mapped) at (output, domain) index
    skip: Skip = _no_skip                # a C condition that leaves a term out
    finish: Finish = _same               # the accumulator → the node's value
    scan_dim: int | None = None          # set for scans: the dimension walked in order
    contraction: Contraction | None = None   # set for GEMM-shaped sums (the tiled schedule)

    @property
    def integer_terms(self) -> bool:
        """Whether the combined terms are integers (a reduction or scan of an integer tensor)."""
        if self.node.op in REDUCTIONS or self.node.op in SCANS:
            return not self.node.args[0].dtype.is_float
        return False


def _reduction(node: Node) -> Stage:
    (x,) = node.args
    dims, keepdim = node.attr("dim"), node.attr("keepdim")

    def source_index(idx: Index, ridx: Index) -> Index:
        out, k, r = [], 0, 0
        for d in range(x.rank):
            if d in dims:
                out.append(ridx[r])
                r += 1
                if keepdim:
                    k += 1
            else:
                out.append(idx[k])
                k += 1
        return tuple(out)

    extents = tuple(x.shape[d] for d in dims)
    combine = "sum" if node.op == "mean" else node.op

    def finish(body: Body, idx: Index, acc: str) -> str:
        if node.op != "mean":
            return acc
        count = " * ".join(f"(({body.ctype}){dim_c(e)})" for e in extents) or literal(1.0, body.ctype)
        return f"({acc} / ({count}))"

    return Stage(node, combine, extents, lambda body, idx, ridx: body.value(x, source_index(idx, ridx)),
                 finish=finish)


def _moments(node: Node) -> Stage:
    """Mean and variance (`lowering/moments.py` runs it): the output index is x's with the
    reduced dims kept as 0, the term x at (output, domain) index."""
    (x,) = node.args
    dims = node.attr("dim")

    def term(body: Body, idx: Index, ridx: Index) -> str:
        reduced = iter(ridx)
        return body.value(x, tuple(next(reduced) if d in dims else idx[d] for d in range(x.rank)))

    return Stage(node, "welford", tuple(x.shape[d] for d in dims), term)


def _matmul(node: Node) -> Stage:
    a, b = node.args

    def lhs(body: Body, idx: Index, ridx: Index) -> str:
        return body.value(a, broadcast_index(idx[:-2], a.shape[:-2]) + (idx[-2], ridx[0]))

    def rhs(body: Body, idx: Index, ridx: Index) -> str:
        return body.value(b, broadcast_index(idx[:-2], b.shape[:-2]) + (ridx[0], idx[-1]))

    def term(body: Body, idx: Index, ridx: Index) -> str:
        return f"({lhs(body, idx, ridx)} * {rhs(body, idx, ridx)})"

    # batch dims the rhs reads index the grid; the others fold into M (one big GEMM)
    rhs_batch = tuple(d for d in range(node.rank - 2) if d >= node.rank - b.rank
                      and b.shape[d - (node.rank - b.rank)] != 1)
    contraction = Contraction(rhs_batch, node.rank - 1, lhs, rhs, lhs_k_fastest=not _transposed(a),
                              rhs_k_fastest=_transposed(b))
    return Stage(node, "sum", (a.shape[-1],), term, contraction=contraction)


def _transposed(x: Node) -> bool:
    """An operand read through a permute that swaps its last two axes (K runs along memory)."""
    return x.op == "permute" and tuple(x.attr("dims")[-2:]) == (x.rank - 1, x.rank - 2)


def _conv(node: Node) -> Stage:
    x, w = node.args[0], node.args[1]
    d = spatial_rank(node.op)
    stride, padding, dilation = node.attr("stride"), node.attr("padding"), node.attr("dilation")
    groups = node.attr("groups", 1)
    transposed = node.op.startswith("conv_transpose")
    cg = int(x.shape[1]) // groups
    kg = int(w.shape[1]) if transposed else int(node.shape[1]) // groups
    kernel = tuple(int(k) for k in w.shape[2:])
    sizes = x.shape[2:]

    def taps(idx: Index, ridx: Index) -> list[str]:
        if transposed:   # output o gathers input (o + p - t*dl) / s when that divides evenly
            return [f"({idx[2 + t]} + {padding[t]} - ({ridx[1 + t]}) * {dilation[t]})" for t in range(d)]
        return [f"({idx[2 + t]} * {stride[t]} - {padding[t]} + ({ridx[1 + t]}) * {dilation[t]})"
                for t in range(d)]

    def skip(idx: Index, ridx: Index) -> str | None:
        conds = []
        for t, pos in enumerate(taps(idx, ridx)):
            if transposed:
                conds.append(f"{pos} < 0 || {pos} % {stride[t]} != 0 || "
                             f"{pos} / {stride[t]} >= {dim_c(sizes[t])}"
                             if stride[t] > 1 else f"{pos} < 0 || {pos} >= {dim_c(sizes[t])}")
            else:
                conds.append(f"{pos} < 0 || {pos} >= {dim_c(sizes[t])}")
        return " || ".join(f"({c})" for c in conds)

    def channel(idx: Index, ridx: Index) -> str:
        return f"((({idx[1]}) / {kg}) * {cg} + {ridx[0]})" if groups > 1 else f"({ridx[0]})"

    def lhs(body: Body, idx: Index, ridx: Index) -> str:
        pos = taps(idx, ridx)
        if transposed:
            pos = [f"({p} / {stride[t]})" if stride[t] > 1 else p for t, p in enumerate(pos)]
        return body.value(x, (idx[0], channel(idx, ridx), *pos))

    def rhs(body: Body, idx: Index, ridx: Index) -> str:
        k = idx[1]
        if transposed:
            return body.value(w, (channel(idx, ridx), f"(({k}) % {kg})" if groups > 1 else k) + ridx[1:])
        return body.value(w, (k, ridx[0]) + ridx[1:])

    def term(body: Body, idx: Index, ridx: Index) -> str:
        return f"({lhs(body, idx, ridx)} * {rhs(body, idx, ridx)})"

    def finish(body: Body, idx: Index, acc: str) -> str:
        if len(node.args) < 3:
            return acc
        return f"({acc} + {body.value(node.args[2], (idx[1],))})"

    # an implicit GEMM (M = batch × output positions, N = output channels, K = channels × taps)
    # where one group spans every channel; grouped convolutions keep the per-output schedules
    contraction = (Contraction((), 1, lhs, rhs, skip, lhs_k_fastest=False, rhs_k_fastest=True)
                   if groups == 1 else None)
    return Stage(node, "sum", (cg, *kernel), term, skip, finish, contraction=contraction)


def _pool(node: Node) -> Stage:
    (x,) = node.args
    kernel, stride, padding = node.attr("kernel_size"), node.attr("stride"), node.attr("padding")
    d = len(kernel)
    dilation = node.attr("dilation") or (1,) * d
    lead = x.rank - d
    sizes = x.shape[lead:]
    is_max = node.op.startswith("max")

    def pos(idx: Index, ridx: Index) -> list[str]:
        return [f"({idx[lead + t]} * {stride[t]} - {padding[t]} + ({ridx[t]}) * {dilation[t]})"
                for t in range(d)]

    def skip(idx: Index, ridx: Index) -> str:
        return " || ".join(f"({p} < 0 || {p} >= {dim_c(sizes[t])})" for t, p in enumerate(pos(idx, ridx)))

    def term(body: Body, idx: Index, ridx: Index) -> str:
        return body.value(x, idx[:lead] + tuple(pos(idx, ridx)))

    def finish(body: Body, idx: Index, acc: str) -> str:
        if is_max:
            return acc
        counts = []
        for t in range(d):
            start = f"({idx[lead + t]} * {stride[t]} - {padding[t]})"
            end = f"min({start} + {kernel[t]}LL, (long long){dim_c(sizes[t])} + {padding[t]})"
            if node.attr("count_include_pad", True):
                counts.append(f"({end} - {start})")
            else:
                counts.append(f"(min({end}, (long long){dim_c(sizes[t])}) - max({start}, 0LL))")
        return f"({acc} / ({body.ctype})({' * '.join(counts)}))"

    return Stage(node, "max" if is_max else "sum", tuple(kernel), term, skip, finish)


def _scan(node: Node) -> Stage:
    (x,) = node.args
    dim = node.attr("dim")
    return Stage(node, "sum" if node.op == "cumsum" else "prod", (x.shape[dim],),
                 lambda body, idx, ridx: body.value(x, idx), scan_dim=dim)


def _map(node: Node) -> Stage:
    return Stage(node, None, (), lambda body, idx, ridx: body.expression(node, idx))


def stage_for(node: Node) -> Stage:
    """The stage that computes `node` (a plain map for elementwise and view nodes)."""
    if node.op in REDUCTIONS:
        return _reduction(node)
    if node.op in STATISTICS:
        return _moments(node)
    if node.op == "matmul":
        return _matmul(node)
    if node.op in CONVS:
        return _conv(node)
    if node.op in POOLS:
        return _pool(node)
    if node.op in SCANS:
        return _scan(node)
    return _map(node)
