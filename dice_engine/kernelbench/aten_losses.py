"""Losses and distances composed from IR operators, following ATen's formulas: binary cross
entropy (log clamped at -100, as ATen), with logits (the overflow-free form), hinge embedding,
soft margin, margin ranking, Poisson NLL (log input), pairwise distance and cdist."""

from __future__ import annotations

from typing import Any, Sequence

from ..ir.graph import Node
from ..ir.ops import const, make
from .aten_ops import Handler, Unsupported, _get, _norm_of, _reduced


def _no_weight(a: Sequence[Any], k: dict[str, Any], i: int, name: str) -> None:
    if _get(a, k, i, "weight") is not None:
        raise Unsupported(f"{name} with weight= has no IR form yet")


def _bce(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, t = a[0], a[1]
    _no_weight(a, k, 2, "binary_cross_entropy")

    def log(v: Node) -> Node:
        return make("clamp", [make("log", [v])], min=-100.0)

    hit = make("mul", [t, log(x)])
    miss = make("mul", [make("sub", [const(1.0), t]), log(make("sub", [const(1.0), x]))])
    loss = make("neg", [make("add", [hit, miss])])
    return _reduced(loss, _get(a, k, 3, "reduction", 1))


def _bce_logits(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """(1 - t) x + log(1 + exp(-x)), written with m = max(-x, 0) so no exp overflows."""
    x, t = a[0], a[1]
    _no_weight(a, k, 2, "binary_cross_entropy_with_logits")
    if _get(a, k, 3, "pos_weight") is not None:
        raise Unsupported("binary_cross_entropy_with_logits with pos_weight= has no IR form yet")
    m = make("clamp", [make("neg", [x])], min=0.0)
    total = make("add", [make("exp", [make("neg", [m])]), make("exp", [make("sub", [make("neg", [x]), m])])])
    soft = make("add", [m, make("log", [total])])
    loss = make("add", [make("mul", [make("sub", [const(1.0), t]), x]), soft])
    return _reduced(loss, _get(a, k, 4, "reduction", 1))


def _hinge_embedding(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, t, margin = a[0], a[1], float(_get(a, k, 2, "margin", 1.0))
    clamped = make("clamp", [make("sub", [const(margin), x])], min=0.0)
    loss = make("add", [make("where", [make("ne", [t, const(1)]), clamped, const(0.0)]),
                        make("where", [make("ne", [t, const(-1)]), x, const(0.0)])])
    return _reduced(loss, _get(a, k, 3, "reduction", 1))


def _soft_margin(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, t = a[0], a[1]
    loss = make("log", [make("add", [const(1.0), make("exp", [make("neg", [make("mul", [t, x])])])])])
    return _reduced(loss, _get(a, k, 2, "reduction", 1))


def _margin_ranking(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x1, x2, t, margin = a[0], a[1], a[2], float(_get(a, k, 3, "margin", 0.0))
    gap = make("mul", [make("neg", [t]), make("sub", [x1, x2])])
    loss = make("clamp", [make("add", [gap, const(margin)])], min=0.0)
    return _reduced(loss, _get(a, k, 4, "reduction", 1))


def _poisson_nll(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, t = a[0], a[1]
    log_input, full = _get(a, k, 2, "log_input", True), _get(a, k, 3, "full", False)
    if not log_input or full:
        raise Unsupported("poisson_nll_loss with log_input=False or full=True has no IR form yet")
    loss = make("sub", [make("exp", [x]), make("mul", [t, x])])
    return _reduced(loss, _get(a, k, 5, "reduction", 1))


def _pairwise_distance(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x1, x2 = a[0], a[1]
    p, eps = _get(a, k, 2, "p", 2.0), float(_get(a, k, 3, "eps", 1e-6))
    keep = bool(_get(a, k, 4, "keepdim", False))
    diff = make("add", [make("sub", [x1, x2]), const(eps)])
    return _norm_of(diff, p, max(x1.rank, x2.rank) - 1, keep)


def _cdist(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """||x1[..., i, :] - x2[..., j, :]||_p for every pair, as a reduction of the broadcast
    difference (one fused kernel; never a copy of it)."""
    x1, x2, p = a[0], a[1], float(_get(a, k, 2, "p", 2.0))
    if x1.rank < 2 or x2.rank < 2:
        raise Unsupported("cdist needs operands of rank >= 2")
    rows = make("reshape", [x1], shape=tuple(x1.shape[:-1]) + (1, x1.shape[-1]))
    cols = make("reshape", [x2], shape=tuple(x2.shape[:-2]) + (1,) + tuple(x2.shape[-2:]))
    diff = make("sub", [rows, cols])
    return _norm_of(diff, p, diff.rank - 1, False)


LOSSES: dict[str, Handler] = {
    "aten.binary_cross_entropy": _bce,
    "aten.binary_cross_entropy_with_logits": _bce_logits,
    "aten.hinge_embedding_loss": _hinge_embedding,
    "aten.soft_margin_loss": _soft_margin,
    "aten.margin_ranking_loss": _margin_ranking,
    "aten.poisson_nll_loss": _poisson_nll,
    "aten.pairwise_distance": _pairwise_distance,
    "aten.cdist": _cdist,
    "aten._euclidean_dist": lambda a, k: _cdist([a[0], a[1], 2.0], {}),
}
