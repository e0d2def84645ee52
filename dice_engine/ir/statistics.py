"""Mean and biased variance of one value over the same axes, as the two halves of one `moments`
node (one pass over the data, Welford) rather than two separate reductions; and the way back to
two reductions, for the consumers that compute statistics one after the other."""
from __future__ import annotations

from . import ops
from .graph import Node


def _half(stats: Node, k: int) -> Node:
    return ops.make("reshape", [ops.make("slice", [stats], dim=0, start=k, end=k + 1)], shape=stats.shape[1:])


def halves(stats: Node) -> tuple[Node, Node]:
    """A `moments` node's mean and variance, each in the argument's shape with the reduced dims
    kept as size 1 (so they broadcast against the argument)."""
    return _half(stats, 0), _half(stats, 1)


def which_half(node: Node) -> tuple[Node, int] | None:
    """(the moments node, 0 for its mean or 1 for its variance) when `node` is one of `halves`;
    else None."""
    if node.op != "reshape" or node.args[0].op != "slice":
        return None
    part = node.args[0]
    stats = part.args[0]
    if stats.op != "moments" or part.attr("dim") != 0 or node.shape != stats.shape[1:]:
        return None
    return stats, part.attr("start")


def two_reductions(x: Node, dims: tuple[int, ...]) -> tuple[Node, Node]:
    """(mean, biased var) over `dims` (kept) as mean(x), then mean((x - mean)²)."""
    mean = ops.make("mean", [x], dim=dims, keepdim=True)
    centered = ops.make("sub", [x, mean])
    return mean, ops.make("mean", [ops.make("mul", [centered, centered])], dim=dims, keepdim=True)


def mean_var(x: Node, dims: tuple[int, ...]) -> tuple[Node, Node]:
    """torch.var_mean(x, dims, correction=0, keepdim=True) as (mean, var), from one `moments`.
    A shape with symbols cannot drop the moments' leading dim (a reshape needs concrete sizes):
    there, `two_reductions`."""
    if all(isinstance(d, int) for d in x.shape):
        return halves(ops.make("moments", [x], dim=dims))
    return two_reductions(x, dims)


def normalize(x: Node, mean: Node, var: Node, eps: float) -> Node:
    """(x - mean) * rsqrt(var + eps), PyTorch's normalization (eps inside the root)."""
    return ops.make("mul", [ops.make("sub", [x, mean]),
                            ops.make("rsqrt", [ops.make("add", [var, ops.const(float(eps))])])])


def standardize(x: Node, dims: tuple[int, ...], eps: float) -> Node:
    """x normalized by its own mean and biased variance over `dims`."""
    return normalize(x, *mean_var(x, dims), eps)
