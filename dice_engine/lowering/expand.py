"""Composite operators rewritten as primitives: reductions (kept dims) and elementwise math.

After `expand`, a DAG holds only elementwise operators, views (permute, reshape, flip, index),
reductions (a layer norm's mean and variance: one `moments`), scans, matmuls, convolutions and
pools: the operators `stages` knows how to lower.
The rewrite follows PyTorch's definitions, so the reference evaluator agrees with it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..ir import ops
from ..ir.graph import Node
from ..ir.statistics import standardize, two_reductions, which_half

COMPOSITE = {"softmax", "log_softmax", "layer_norm", "rms_norm"}

_FINFO_EPS = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10, "f32": 2.0 ** -23, "f64": 2.0 ** -52}


def _softmax(node: Node, x: Node) -> Node:
    dim = node.attr("dim")
    shifted = ops.make("sub", [x, ops.make("max", [x], dim=dim, keepdim=True)])
    e = ops.make("exp", [shifted])
    total = ops.make("sum", [e], dim=dim, keepdim=True)
    if node.op == "log_softmax":
        return ops.make("sub", [shifted, ops.make("log", [total])])
    return ops.make("div", [e, total])


def _norm(node: Node, args: list[Node]) -> Node:
    x = args[0]
    axes = tuple(range(x.rank - node.attr("axes", 1), x.rank))
    eps = node.attr("eps")
    if node.op == "layer_norm":
        y = standardize(x, axes, eps)
    else:
        eps = _FINFO_EPS[x.dtype.name] if eps is None else eps
        ms = ops.make("mean", [ops.make("mul", [x, x])], dim=axes, keepdim=True)
        y = ops.make("mul", [x, ops.make("rsqrt", [ops.make("add", [ms, ops.const(float(eps))])])])
    if len(args) > 1:
        y = ops.make("mul", [y, args[1]])
    if len(args) > 2:
        y = ops.make("add", [y, args[2]])
    return y


def _rewrite(root: Node, visit: Callable[[Node, list[Node], dict[int, Node]], Node | None]) -> Node:
    """`root` rebuilt bottom-up: `visit(node, new_args, memo)` gives a node's replacement, or None
    to keep the node (rebuilt only where its arguments changed)."""
    memo: dict[int, Node] = {}
    for node in root.walk():
        args = [memo[id(a)] for a in node.args]
        new = visit(node, args, memo)
        if new is None:
            new = node if all(a is b for a, b in zip(args, node.args)) else replace(node, args=tuple(args))
        memo[id(node)] = new
    return memo[id(root)]


def expand(root: Node) -> Node:
    """`root` with every composite operator replaced by its primitive definition."""

    def visit(node: Node, args: list[Node], memo: dict[int, Node]) -> Node | None:
        if node.op == "softmax" or node.op == "log_softmax":
            return _softmax(node, args[0])
        if node.op in ("layer_norm", "rms_norm"):
            return _norm(node, args)
        return None

    return _rewrite(root, visit)


def two_pass(root: Node) -> Node:
    """`root` with each of a `moments` node's `statistics.halves` rewritten as
    `statistics.two_reductions`. The one-kernel normalisation computes statistics one after the
    other from cache, so it takes this form; a `moments` read any other way is left as it is."""
    pairs: dict[int, tuple[Node, Node]] = {}

    def visit(node: Node, args: list[Node], memo: dict[int, Node]) -> Node | None:
        half = which_half(node)
        if half is None:
            return None
        stats, k = half
        return pairs.setdefault(id(stats), two_reductions(memo[id(stats.args[0])], stats.attr("dim")))[k]

    return _rewrite(root, visit)
