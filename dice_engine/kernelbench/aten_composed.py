"""ATen operators the IR serves through its scans, views and index tensors: cumprod, flip,
triu/tril (an index mask), cross_entropy and nll_loss (a one-hot select of log-probabilities),
with PyTorch's ignore_index honoured: an ignored row adds nothing and is not counted by 'mean'.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..intent import composites
from ..ir.graph import Node
from ..ir.ops import const, index, make
from .aten_ops import Handler, Unsupported, _get, _reduced
from .aten_reshaping import ReshapingHandler, View, _shape


def _cumprod(a: Sequence[Any], k: dict[str, Any]) -> Node:
    if _get(a, k, 2, "dtype") is not None:
        raise Unsupported("cumprod with dtype= has no IR form yet")
    return make("cumprod", [a[0]], dim=int(_get(a, k, 1, "dim")))


def _flip(a: Sequence[Any], k: dict[str, Any]) -> Node:
    dims = _get(a, k, 1, "dims")
    return make("flip", [a[0]], dims=tuple(dims) if isinstance(dims, (list, tuple)) else (dims,))


def _triangle(upper: bool) -> Handler:
    return lambda a, k: composites.triangle(a[0], int(_get(a, k, 1, "diagonal", 0)), upper)


def _nll(logp: Node, target: Node, reduction: int, ignore_index: int, view: View,
         smoothing: float = 0.0) -> Node:
    """-logp[n, target[n]] per row, reduced as ATen's enum says (0 none, 1 mean, 2 sum). With
    label smoothing e, a row's loss is (1 - e) times that plus e times the mean of -logp[n, :]
    over the classes (PyTorch's definition; ignored rows count neither)."""
    if logp.rank != 2:
        raise Unsupported(f"a class dimension after dim 1 (input of rank {logp.rank}) has no IR form yet")
    rows = _shape(logp)[0]
    if target.dtype.is_float or _shape(target) != (rows,):
        raise Unsupported(
            f"target must be class indices of shape [{rows}], got {target.dtype}{list(target.shape)}"
        )
    hit = make("eq", [index(logp.shape, 1), view(target, (rows, 1))])
    picked = make("sum", [make("where", [hit, logp, const(0.0)])], dim=1)
    kept = make("ne", [target, const(int(ignore_index))])  # an ignore_index may be a class
    row_loss = make("neg", [picked])
    if smoothing:
        row_loss = composites.label_smoothed(row_loss, logp, smoothing)
    loss = make("where", [kept, row_loss, const(0.0)])
    if int(reduction) != 1:
        return _reduced(loss, reduction)
    counted = make("sum", [make("cast", [kept], dtype=logp.dtype)])
    return make("div", [make("sum", [loss]), counted])


def _no_weight(a: Sequence[Any], k: dict[str, Any], name: str) -> None:
    if _get(a, k, 2, "weight") is not None:
        raise Unsupported(f"{name} with class weights has no IR form yet")


def _cross_entropy(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    """aten.cross_entropy_loss(input, target, weight, reduction, ignore_index, label_smoothing)."""
    _no_weight(a, k, "cross_entropy")
    smoothing = float(_get(a, k, 5, "label_smoothing", 0.0))
    if not 0.0 <= smoothing <= 1.0:
        raise Unsupported(f"label_smoothing must be in [0, 1], got {smoothing}")
    logp = make("log_softmax", [a[0]], dim=1)
    return _nll(logp, a[1], _get(a, k, 3, "reduction", 1), _get(a, k, 4, "ignore_index", -100), view,
                smoothing)


def _nll_loss(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    """aten.nll_loss / nll_loss_nd(input, target, weight, reduction, ignore_index)."""
    _no_weight(a, k, "nll_loss")
    return _nll(a[0], a[1], _get(a, k, 3, "reduction", 1), _get(a, k, 4, "ignore_index", -100), view)


COMPOSED: dict[str, Handler] = {
    "aten.cumprod": _cumprod,
    "aten.flip": _flip,
    "aten.triu": _triangle(True),
    "aten.tril": _triangle(False),
}
COMPOSED_RESHAPING: dict[str, ReshapingHandler] = {
    "aten.cross_entropy_loss": _cross_entropy,
    "aten.nll_loss": _nll_loss,
    "aten.nll_loss_nd": _nll_loss,
}
