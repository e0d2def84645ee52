"""Row gathers: one element per row of a row-wise value, picked at a per-row class index.

PyTorch's nll_loss and cross_entropy (and any `x.gather(1, t)`) reach the IR as a one-hot
select summed over the row:

    sum(where(eq(index([R, C], dim=1), t), v, 0), dim=1)     t: integer [R] or [R, 1]

with `v` an input `x` of [R, C] (a plain gather) or `log_softmax(x, dim=1)` (the
log-probability of the picked class). Read this way it is one row pass: the row's max and
sum of exponentials when `v` is a log_softmax, plus the single element x[r, t[r]], never a
[R, C] intermediate. A target outside [0, C) picks nothing (the sum of an empty select: 0).
"""
from __future__ import annotations

from dataclasses import dataclass

from .graph import Node


@dataclass(frozen=True)
class RowGather:
    reduce: Node       # the sum over dim 1: the gathered value of each row, shape [R]
    values: Node       # the input x, [R, C]
    target: Node       # the integer input of class indices, [R] or [R, 1]
    log_softmax: bool  # the row is log_softmax(x, dim=1) rather than x itself

    @property
    def interior(self) -> set[int]:
        """ids of the nodes strictly between the sum and its inputs (the select, the one-hot
        test, the index and any log_softmax): the row pass computes them, nobody else."""
        inner: set[int] = set()
        for n in self.reduce.args[0].walk():
            if n.op != "input":
                inner.add(id(n))
        return inner


def _is_zero(node: Node) -> bool:
    return node.op == "const" and not node.shape and float(node.value) == 0.0


def _class_index(cond: Node, shape: tuple) -> Node | None:
    """The target t of eq(index(shape, dim=1), t) (either operand order), or None."""
    if cond.op != "eq":
        return None
    for pos, other in ((0, 1), (1, 0)):
        idx, target = cond.args[pos], cond.args[other]
        if idx.op != "index" or idx.attr("dim") != 1 or tuple(idx.shape) != tuple(shape):
            continue
        rows = shape[0]
        if target.op == "reshape" and tuple(target.shape) == (rows, 1):
            target = target.args[0]   # the intent front end's view of an [R] target
        if (target.op == "input" and not target.dtype.is_float and target.dtype.name != "bool"
                and tuple(target.shape) in ((rows,), (rows, 1))):
            return target
    return None


def match_row_gather(node: Node) -> RowGather | None:
    """`node` read as a row gather, or None."""
    if node.op != "sum" or tuple(node.attr("dim", ())) != (1,) or node.attr("keepdim", False):
        return None
    select = node.args[0]
    if select.op != "where" or select.rank != 2 or not _is_zero(select.args[2]):
        return None
    v = select.args[1]
    target = _class_index(select.args[0], tuple(v.shape))
    if target is None:
        return None
    log = v.op == "log_softmax" and v.attr("dim") == 1
    x = v.args[0] if log else v
    if x.op != "input" or x.rank != 2 or not x.dtype.is_float or x.dtype != node.dtype:
        return None
    return RowGather(node, x, target, log)


def row_gathers(root: Node) -> list[RowGather]:
    """Every row gather in `root`'s expression."""
    return [g for n in root.walk() if (g := match_row_gather(n)) is not None]
