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
         smoothing: float = 0.0, weight: Node | None = None) -> Node:
    """-logp[n, target[n], ...] per sample, the classes along dim 1 of an [N, C, d1, ...] input and
    the target [N, d1, ...], reduced as ATen's enum says (0 none, 1 mean, 2 sum). With class
    weights w a sample's loss is scaled by w[target] and the mean divides by the kept samples'
    weights; with label smoothing e it is (1 - e) times the loss plus e times the mean of -logp
    over the classes (PyTorch's definitions; ignored samples count neither)."""
    if logp.rank < 2:
        raise Unsupported(f"nll_loss needs the classes along dim 1 (input of rank {logp.rank})")
    shape = _shape(logp)
    samples = (shape[0], *shape[2:])
    if target.dtype.is_float or _shape(target) != samples:
        raise Unsupported(
            f"target must be class indices of shape {list(samples)}, got {target.dtype}{list(target.shape)}"
        )
    if weight is not None and smoothing:
        raise Unsupported("cross_entropy with both class weights and label smoothing has no IR form yet")
    classes = (shape[0], 1, *shape[2:])
    hit = make("eq", [index(logp.shape, 1), view(target, classes)])
    picked = make("sum", [make("where", [hit, logp, const(0.0)])], dim=1)
    kept = make("ne", [target, const(int(ignore_index))])  # an ignore_index may be a class
    sample_loss = make("neg", [picked])
    if smoothing:
        sample_loss = composites.label_smoothed(sample_loss, logp, smoothing)
    counted = make("cast", [kept], dtype=logp.dtype)
    if weight is not None:
        if _shape(weight) != (shape[1],):
            raise Unsupported(f"class weights must have shape [{shape[1]}], got {list(weight.shape)}")
        per_class = view(weight, (1, shape[1]) + (1,) * (logp.rank - 2))
        picked_weight = make("sum", [make("where", [hit, per_class, const(0.0)])], dim=1)
        sample_loss = make("mul", [sample_loss, picked_weight])
        counted = make("mul", [counted, picked_weight])
    loss = make("where", [kept, sample_loss, const(0.0)])
    if int(reduction) != 1:
        return _reduced(loss, reduction)
    return make("div", [make("sum", [loss]), make("sum", [counted])])


def _weight(a: Sequence[Any], k: dict[str, Any]) -> Node | None:
    weight = _get(a, k, 2, "weight")
    if weight is not None and not isinstance(weight, Node):
        raise Unsupported(f"class weights must be a tensor, got {weight!r}")
    return weight


def _cross_entropy(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    """aten.cross_entropy_loss(input, target, weight, reduction, ignore_index, label_smoothing)."""
    smoothing = float(_get(a, k, 5, "label_smoothing", 0.0))
    if not 0.0 <= smoothing <= 1.0:
        raise Unsupported(f"label_smoothing must be in [0, 1], got {smoothing}")
    logp = make("log_softmax", [a[0]], dim=1)
    return _nll(logp, a[1], _get(a, k, 3, "reduction", 1), _get(a, k, 4, "ignore_index", -100), view,
                smoothing, _weight(a, k))


def _nll_loss(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    """aten.nll_loss / nll_loss_nd(input, target, weight, reduction, ignore_index)."""
    return _nll(a[0], a[1], _get(a, k, 3, "reduction", 1), _get(a, k, 4, "ignore_index", -100), view,
                weight=_weight(a, k))


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
