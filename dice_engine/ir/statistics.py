"""Mean and biased variance of one value over the same axes, as the two halves of one `moments`
node (one pass over the data, Welford) rather than two separate reductions."""
from __future__ import annotations

from . import ops
from .graph import Node


def halves(stats: Node) -> tuple[Node, Node]:
    """A `moments` node's mean and variance, each in the argument's shape with the reduced dims
    kept as size 1 (so they broadcast against the argument)."""
    keep = stats.shape[1:]
    return tuple(ops.make("reshape", [ops.make("slice", [stats], dim=0, start=k, end=k + 1)], shape=keep)
                 for k in (0, 1))


def mean_var(x: Node, dims: tuple[int, ...]) -> tuple[Node, Node]:
    """torch.var_mean(x, dims, correction=0, keepdim=True) as (mean, var), from one `moments`.
    A shape with symbols cannot drop the moments' leading dim (a reshape needs concrete sizes):
    there the mean and then the mean of squared deviations, two reductions."""
    if all(isinstance(d, int) for d in x.shape):
        return halves(ops.make("moments", [x], dim=dims))
    mean = ops.make("mean", [x], dim=dims, keepdim=True)
    centered = ops.make("sub", [x, mean])
    return mean, ops.make("mean", [ops.make("mul", [centered, centered])], dim=dims, keepdim=True)


def standardize(x: Node, dims: tuple[int, ...], eps: float) -> Node:
    """(x - mean) * rsqrt(biased var + eps) over `dims`, PyTorch's normalization (eps inside)."""
    mean, var = mean_var(x, dims)
    return ops.make("mul", [ops.make("sub", [x, mean]),
                            ops.make("rsqrt", [ops.make("add", [var, ops.const(float(eps))])])])
