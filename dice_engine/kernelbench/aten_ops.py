"""The ATen → DICE IR table: one entry per ATen operator packet ("aten.relu").

A handler gets the operator's positional arguments and keyword arguments, tensors already IR
nodes, everything else as traced (ints, floats, lists), and returns the IR node (or a tuple of
nodes, for operators with several results). Operators the IR has no node for are composed from
those it has (elu, softplus, var, ...). A handler refuses with `Unsupported(why)`.

To map a new operator: add a handler below and its name to `TABLE`. Views are not here: they
move no data and are handled with the buffers (see `VIEWS`).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from ..intent import composites
from ..ir.dtypes import DTYPES
from ..ir.graph import Node
from ..ir.ops import const, make, transpose

Handler = Callable[[Sequence[Any], dict[str, Any]], "Node | tuple[Node, ...]"]


class Unsupported(Exception):
    """The operator, or this use of it, has no IR form yet; the message says why."""


class Absent:
    """A result with no IR form (adaptive_max_pool's indices): the operation that reads it is
    refused, saying `why`."""

    def __init__(self, why: str):
        self.why = why


# Operators that only reinterpret a contiguous tensor's shape (same storage, same order).
VIEWS = {
    "aten.view",
    "aten.reshape",
    "aten._unsafe_view",
    "aten.flatten",
    "aten.unflatten",
    "aten.squeeze",
    "aten.unsqueeze",
}
# Operators whose value is their (first) argument's.
IDENTITY = {
    "aten.clone",
    "aten.contiguous",
    "aten.alias",
    "aten.detach",
    "aten.detach_",
    "aten.lift_fresh_copy",
}


def _get(args: Sequence[Any], kwargs: dict[str, Any], i: int, name: str, default: Any = None) -> Any:
    if name in kwargs:
        return kwargs[name]
    return args[i] if i < len(args) else default


def _scalar(v: Any) -> Node:
    return v if isinstance(v, Node) else const(v)


def _unary(op: str) -> Handler:
    return lambda a, k: make(op, [a[0]])


def _binary(op: str) -> Handler:
    return lambda a, k: make(op, [_scalar(a[0]), _scalar(a[1])])


def _add(sign: float) -> Handler:
    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        alpha = _get(a, k, 2, "alpha", 1)
        other = _scalar(a[1]) if alpha == 1 else make("mul", [_scalar(a[1]), const(alpha)])
        return make("add" if sign > 0 else "sub", [_scalar(a[0]), other])

    return handler


def _rsub(a: Sequence[Any], k: dict[str, Any]) -> Node:
    alpha = _get(a, k, 2, "alpha", 1)
    scaled = a[0] if alpha == 1 else make("mul", [a[0], const(alpha)])
    return make("sub", [_scalar(a[1]), _scalar(scaled)])


def _div(a: Sequence[Any], k: dict[str, Any]) -> Node:
    if _get(a, k, 2, "rounding_mode") is not None:
        raise Unsupported("division with a rounding mode has no IR form yet")
    return make("div", [_scalar(a[0]), _scalar(a[1])])


def _clamp(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, lo, hi = a[0], _get(a, k, 1, "min"), _get(a, k, 2, "max")
    if isinstance(lo, Node) or isinstance(hi, Node):
        out = x if lo is None else make("maximum", [x, lo])
        return out if hi is None else make("minimum", [out, _scalar(hi)])
    return make("clamp", [x], min=lo, max=hi)


def _hardtanh(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return make("clamp", [a[0]], min=_get(a, k, 1, "min_val", -1.0), max=_get(a, k, 2, "max_val", 1.0))


def _elu_core(x: Node, alpha: float) -> Node:
    neg = make("mul", [const(alpha), make("sub", [make("exp", [x]), const(1.0)])])
    return make("where", [make("gt", [x, const(0.0)]), x, neg])


def _elu(a: Sequence[Any], k: dict[str, Any]) -> Node:
    alpha, scale = _get(a, k, 1, "alpha", 1.0), _get(a, k, 2, "scale", 1.0)
    if _get(a, k, 3, "input_scale", 1.0) != 1.0:
        raise Unsupported("elu with input_scale != 1 has no IR form yet")
    out = _elu_core(a[0], alpha)
    return out if scale == 1.0 else make("mul", [out, const(scale)])


def _selu(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return make("mul", [_elu_core(a[0], 1.6732632423543772), const(1.0507009873554805)])


def _softplus(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return composites.softplus(a[0], _get(a, k, 1, "beta", 1.0), _get(a, k, 2, "threshold", 20.0))


def _threshold(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, threshold, value = a[0], _get(a, k, 1, "threshold"), _get(a, k, 2, "value")
    return make("where", [make("gt", [x, const(threshold)]), x, const(value)])


def _hardshrink(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, lambd = a[0], float(_get(a, k, 1, "lambd", 0.5))
    return make("where", [make("gt", [make("abs", [x]), const(lambd)]), x, const(0.0)])


def _softshrink(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, lambd = a[0], float(_get(a, k, 1, "lambd", 0.5))
    low = make("where", [make("lt", [x, const(-lambd)]), make("add", [x, const(lambd)]), const(0.0)])
    return make("where", [make("gt", [x, const(lambd)]), make("sub", [x, const(lambd)]), low])


def _celu(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """celu(x, alpha) = x for x > 0, alpha * (exp(x / alpha) - 1) otherwise."""
    x, alpha = a[0], float(_get(a, k, 1, "alpha", 1.0))
    grown = make("exp", [make("div", [x, const(alpha)])])
    neg = make("mul", [const(alpha), make("sub", [grown, const(1.0)])])
    return make("where", [make("gt", [x, const(0.0)]), x, neg])


def _rrelu(a: Sequence[Any], k: dict[str, Any]) -> Node:
    lower, upper = float(_get(a, k, 1, "lower", 1.0 / 8)), float(_get(a, k, 2, "upper", 1.0 / 3))
    if _get(a, k, 3, "training", False):
        raise Unsupported("rrelu in training mode draws random slopes; DICE has no random kernels")
    return make("leaky_relu", [a[0]], negative_slope=(lower + upper) / 2)


def _sign(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """1, -1 or 0 in x's dtype; NaN stays NaN."""
    x = a[0]
    one, zero = (1.0, 0.0) if x.dtype.is_float else (1, 0)
    out = make("where", [make("gt", [x, const(zero)]), const(one),
                         make("where", [make("lt", [x, const(zero)]), const(-one), const(zero)])])
    out = out if out.dtype == x.dtype else make("cast", [out], dtype=x.dtype)
    return make("where", [make("ne", [x, x]), x, out]) if x.dtype.is_float else out


def _scaled_log(base: float) -> Handler:
    """log2 / log10 as log(x) / log(base)."""
    return lambda a, k: make("div", [make("log", [a[0]]), const(math.log(base))])


def _addc(op: str) -> Handler:
    """addcmul / addcdiv: x + value * (t1 op t2)."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        value = _get(a, k, 3, "value", 1)
        term = make(op, [a[1], a[2]])
        return make("add", [a[0], term if value == 1 else make("mul", [term, const(value)])])

    return handler


def _lerp(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """ATen's two-sided form: start + w (end - start) for w < 0.5, end - (end - start)(1 - w) else."""
    start, end, w = a[0], a[1], _scalar(a[2])
    diff = make("sub", [end, start])
    low = make("add", [start, make("mul", [w, diff])])
    high = make("sub", [end, make("mul", [diff, make("sub", [const(1.0), w])])])
    return make("where", [make("lt", [make("abs", [w]), const(0.5)]), low, high])


def _logaddexp(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, y = a[0], a[1]
    top = make("maximum", [x, y])
    gap = make("neg", [make("abs", [make("sub", [x, y])])])
    return make("add", [top, make("log", [make("add", [const(1.0), make("exp", [gap])])])])


def _any_all(op: str) -> Handler:
    """any / all: a count of the true (or false) elements compared with 0."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        x = a[0]
        truth = make("ne", [x, const(0)]) if x.dtype.name != "bool" else x
        counted = truth if op == "any" else make("logical_not", [truth])
        total = make("sum", [make("cast", [counted], dtype=DTYPES["i64"])], dim=_dims(_get(a, k, 1, "dim")),
                     keepdim=bool(_get(a, k, 2, "keepdim", False)))
        return make("ne" if op == "any" else "eq", [total, const(0)])

    return handler


def _stat_mean(root: bool) -> Handler:
    """var_mean / std_mean: (var or std, mean) with var's arguments."""
    spread = _var(root)

    def handler(a: Sequence[Any], k: dict[str, Any]) -> tuple[Node, Node]:
        dim, keep = _dims(_get(a, k, 1, "dim")), bool(k.get("keepdim", a[3] if len(a) > 3 else False))
        return spread(a, k), make("mean", [a[0]], dim=dim, keepdim=keep)

    return handler


def _leaky_relu(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return make("leaky_relu", [a[0]], negative_slope=_get(a, k, 1, "negative_slope", 0.01))


def _gelu(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return make("gelu", [a[0]], approximate=_get(a, k, 1, "approximate", "none"))


def _dims(dim: Any) -> Any:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def _reduce(op: str) -> Handler:
    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        x = _in_dtype(a[0], _get(a, k, 3, "dtype"))  # dtype=: the input converted first, as torch
        return make(op, [x], dim=_dims(_get(a, k, 1, "dim")), keepdim=bool(_get(a, k, 2, "keepdim", False)))

    return handler


def _in_dtype(x: Node, dtype: Any) -> Node:
    if dtype is None:
        return x
    target = next((d for d in DTYPES.values() if d.torch == str(dtype).removeprefix("torch.")), None)
    if target is None:
        raise Unsupported(f"no IR dtype for {dtype}")
    return x if target == x.dtype else make("cast", [x], dtype=target)


def _max_or_min(op: str) -> Handler:
    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node | tuple[Node, ...]:
        other = _get(a, k, 1, "dim")
        if isinstance(other, Node):
            return make("maximum" if op == "max" else "minimum", [a[0], other])
        if other is None:
            return make(op, [a[0]])
        keep = bool(_get(a, k, 2, "keepdim", False))
        return (
            make(op, [a[0]], dim=other, keepdim=keep),
            make("argmax" if op == "max" else "argmin", [a[0]], dim=other, keepdim=keep),
        )

    return handler


def _amax(op: str) -> Handler:
    return lambda a, k: make(
        op, [a[0]], dim=_dims(_get(a, k, 1, "dim")), keepdim=bool(_get(a, k, 2, "keepdim", False))
    )


def _arg(op: str) -> Handler:
    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        x, dim, keep = a[0], _get(a, k, 1, "dim"), bool(_get(a, k, 2, "keepdim", False))
        if dim is None:  # the index into the flattened tensor: a reduction of its 1-D view
            flat = make(op, [make("reshape", [x], shape=(-1,))], dim=0)
            return make("reshape", [flat], shape=(1,) * x.rank) if keep else flat
        return make(op, [x], dim=dim, keepdim=keep)

    return handler


def _prod(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return make("prod", [a[0]], dim=_get(a, k, 1, "dim"), keepdim=bool(_get(a, k, 2, "keepdim", False)))


def _var(root: bool) -> Handler:
    """var/std as IR: mean, squared deviation, sum / (N - correction) (two kernels)."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        x = a[0]
        dim = _dims(_get(a, k, 1, "dim"))
        correction = k.get("correction", 1)
        unbiased = k.get("unbiased", a[2] if len(a) > 2 and isinstance(a[2], bool) else None)
        if unbiased is not None:  # aten.var.dim(x, dim, unbiased, keepdim) passes them positionally
            correction = 1 if unbiased else 0
        keep = bool(k.get("keepdim", a[3] if len(a) > 3 else False))
        return composites.variance(x, dim, correction or 0, keep, root)

    return handler


def _softmax(op: str) -> Handler:
    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        if _get(a, k, 2, "dtype") not in (None, False):
            raise Unsupported(f"{op} with a dtype change has no IR form yet")
        return make(op, [a[0]], dim=_get(a, k, 1, "dim"))

    return handler


def _rms_norm(a: Sequence[Any], k: dict[str, Any]) -> Node:
    weight = _get(a, k, 2, "weight")
    return make(
        "rms_norm",
        [a[0], *([weight] if weight is not None else [])],
        normalized_shape=tuple(_get(a, k, 1, "normalized_shape")),
        eps=_get(a, k, 3, "eps"),
    )


def _cumsum(a: Sequence[Any], k: dict[str, Any]) -> Node:
    if _get(a, k, 2, "dtype") is not None:
        raise Unsupported("cumsum with dtype= has no IR form yet")
    return make("cumsum", [a[0]], dim=_get(a, k, 1, "dim"))


def _permute(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return make("permute", [a[0]], dims=tuple(_get(a, k, 1, "dims")))


def _transpose(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return transpose(a[0], int(a[1]), int(a[2]))


def _t(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return transpose(a[0], 0, 1) if a[0].rank == 2 else a[0]


def _numpy_t(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """x.T: every dimension reversed."""
    x = a[0]
    return x if x.rank < 2 else make("permute", [x], dims=tuple(reversed(range(x.rank))))


def _linear(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, w, b = a[0], a[1], _get(a, k, 2, "bias")
    out = make("matmul", [x, transpose(w, 0, 1)])
    return out if b is None else make("add", [out, b])


def _addmm(a: Sequence[Any], k: dict[str, Any]) -> Node:
    beta, alpha = _get(a, k, 3, "beta", 1), _get(a, k, 4, "alpha", 1)
    prod = make("matmul", [a[1], a[2]])
    prod = prod if alpha == 1 else make("mul", [prod, const(alpha)])
    bias = a[0] if beta == 1 else make("mul", [a[0], const(beta)])
    return prod if beta == 0 else make("add", [bias, prod])


def _baddbmm(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """beta * input + alpha * (batch1 @ batch2), as addmm batched."""
    return _addmm(a, k)


def _log_sigmoid(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)), which never overflows."""
    x = a[0]
    tail = make("log", [make("add", [const(1.0), make("exp", [make("neg", [make("abs", [x])])])])])
    return make("sub", [make("minimum", [x, const(0.0)]), tail])


def _cosine_similarity(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """ATen's form: each operand divided by its norm clamped to eps, then the dot product."""
    x1, x2 = a[0], a[1]
    dim, eps = int(_get(a, k, 2, "dim", 1)), float(_get(a, k, 3, "eps", 1e-8))

    def unit(x: Node) -> Node:
        norm = make("sqrt", [make("sum", [make("mul", [x, x])], dim=dim, keepdim=True)])
        return make("div", [x, make("clamp", [norm], min=eps)])

    return make("sum", [make("mul", [unit(x1), unit(x2)])], dim=dim)


def _cosine_embedding(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """ATen's cosine_embedding_loss: 1 - cos for target 1, max(cos - margin, 0) for -1."""
    x1, x2, target = a[0], a[1], a[2]
    margin = float(_get(a, k, 3, "margin", 0.0))
    dim = x1.rank - 1
    eps = const(1e-12)
    prod = make("sum", [make("mul", [x1, x2])], dim=dim)
    mag1 = make("add", [make("sum", [make("mul", [x1, x1])], dim=dim), eps])
    mag2 = make("add", [make("sum", [make("mul", [x2, x2])], dim=dim), eps])
    cos = make("div", [prod, make("sqrt", [make("mul", [mag1, mag2])])])
    pos = make("where", [make("eq", [target, const(1)]), make("sub", [const(1.0), cos]), const(0.0)])
    neg = make("clamp", [make("sub", [cos, const(margin)])], min=0.0)
    neg = make("where", [make("eq", [target, const(-1)]), neg, const(0.0)])
    return _reduced(make("add", [pos, neg]), _get(a, k, 4, "reduction", 1))


def _dropout(a: Sequence[Any], k: dict[str, Any]) -> Node:
    p, train = _get(a, k, 1, "p", 0.5), _get(a, k, 2, "train", True)
    if p == 0 or not train:
        return a[0]
    raise Unsupported("dropout in training mode draws random numbers; DICE has no random kernels")


def _to_copy(a: Sequence[Any], k: dict[str, Any]) -> Node:
    dtype = k.get("dtype")
    if dtype is None:  # aten.to.dtype(x, dtype, ...) passes it positionally
        dtype = next((v for v in a[1:] if str(v).startswith("torch.")), None)
    if dtype is None:
        return a[0]
    name = str(dtype).removeprefix("torch.")
    target = next((d for d in DTYPES.values() if d.torch == name), None)
    if target is None:
        raise Unsupported(f"no IR dtype for {dtype}")
    return a[0] if target == a[0].dtype else make("cast", [a[0]], dtype=target)


def _norm_of(x: Node, p: Any, dim: Any, keep: bool) -> Node:
    """The vector p-norm of x over `dim` (None: every element)."""
    absx = make("abs", [x])
    if p in (2, 2.0, "fro"):
        return make("sqrt", [make("sum", [make("mul", [x, x])], dim=dim, keepdim=keep)])
    if p in (1, 1.0):
        return make("sum", [absx], dim=dim, keepdim=keep)
    if p == float("inf"):
        return make("max", [absx], dim=dim, keepdim=keep)
    if p == float("-inf"):
        return make("min", [absx], dim=dim, keepdim=keep)
    if isinstance(p, (int, float)) and p > 0:
        total = make("sum", [make("pow", [absx, const(float(p))])], dim=dim, keepdim=keep)
        return make("pow", [total, const(1.0 / p)])
    raise Unsupported(f"the {p!r}-norm has no IR form yet")


def _linalg_norm(matrix: bool) -> Handler:
    """linalg.norm / matrix_norm: the Frobenius norm over two dims (their default), else a vector
    norm; other matrix norms (nuclear, spectral, 1/inf) are refused."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        x, ord_ = a[0], _get(a, k, 1, "ord", "fro" if matrix else None)
        dim = _dims(_get(a, k, 2, "dim", (-2, -1) if matrix else None))
        keep = bool(_get(a, k, 3, "keepdim", False))
        two = isinstance(dim, tuple) and len(dim) == 2
        if ord_ in (None, "fro") or (not two and not matrix):
            return _norm_of(x, 2 if ord_ in (None, "fro") else ord_, dim, keep)
        raise Unsupported(f"the matrix norm ord={ord_!r} has no IR form yet (the Frobenius norm has)")

    return handler


def _vector_norm(a: Sequence[Any], k: dict[str, Any]) -> Node:
    if _get(a, k, 4, "dtype") is not None:
        raise Unsupported("vector_norm with dtype= has no IR form yet")
    return _norm_of(
        a[0], _get(a, k, 1, "ord", 2), _dims(_get(a, k, 2, "dim")), bool(_get(a, k, 3, "keepdim", False))
    )


def _bitwise_not(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """`~mask` of a bool tensor is its logical not; of an integer, -x - 1 (two's complement)."""
    x = a[0]
    if x.dtype.name == "bool":
        return make("logical_not", [x])
    if x.dtype.is_float:
        raise Unsupported(f"bitwise_not of a floating tensor ({x.dtype})")
    return make("sub", [make("neg", [x]), const(1)])


def _reduced(loss: Node, reduction: int) -> Node:
    """ATen's reduction enum: 0 none, 1 mean, 2 sum."""
    return {0: lambda: loss, 1: lambda: make("mean", [loss]), 2: lambda: make("sum", [loss])}[
        int(reduction)
    ]()


def _smooth_l1(a: Sequence[Any], k: dict[str, Any]) -> Node:
    beta = float(_get(a, k, 3, "beta", 1.0))
    d = make("abs", [make("sub", [a[0], a[1]])])
    if beta == 0:
        return _reduced(d, _get(a, k, 2, "reduction", 1))
    quad = make("div", [make("mul", [const(0.5), make("mul", [d, d])]), const(beta)])
    loss = make("where", [make("lt", [d, const(beta)]), quad, make("sub", [d, const(0.5 * beta)])])
    return _reduced(loss, _get(a, k, 2, "reduction", 1))


def _huber(a: Sequence[Any], k: dict[str, Any]) -> Node:
    delta = float(_get(a, k, 3, "delta", 1.0))
    d = make("abs", [make("sub", [a[0], a[1]])])
    quad = make("mul", [const(0.5), make("mul", [d, d])])
    lin = make("mul", [const(delta), make("sub", [d, const(0.5 * delta)])])
    return _reduced(make("where", [make("lt", [d, const(delta)]), quad, lin]), _get(a, k, 2, "reduction", 1))


def _mse(a: Sequence[Any], k: dict[str, Any]) -> Node:
    d = make("sub", [a[0], a[1]])
    return _reduced(make("mul", [d, d]), _get(a, k, 2, "reduction", 1))


def _l1(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return _reduced(make("abs", [make("sub", [a[0], a[1]])]), _get(a, k, 2, "reduction", 1))


def _kl_div(a: Sequence[Any], k: dict[str, Any]) -> Node:
    loss = composites.kl_pointwise(a[0], a[1], bool(_get(a, k, 3, "log_target", False)))
    return _reduced(loss, _get(a, k, 2, "reduction", 1))


def _triplet(a: Sequence[Any], k: dict[str, Any]) -> Node:
    anchor, pos, neg = a[0], a[1], a[2]
    margin, p, eps = (
        float(_get(a, k, 3, "margin", 1.0)),
        _get(a, k, 4, "p", 2.0),
        float(_get(a, k, 5, "eps", 1e-6)),
    )

    def dist(u: Node, v: Node) -> Node:  # pairwise_distance: ||u - v + eps|| over the last dim
        return _norm_of(make("add", [make("sub", [u, v]), const(eps)]), p, u.rank - 1, False)

    negative = dist(anchor, neg)
    if _get(a, k, 6, "swap", False):   # the distance swap: the nearer of anchor and positive to the negative
        negative = make("minimum", [negative, dist(pos, neg)])
    loss = make("clamp", [make("add", [make("sub", [dist(anchor, pos), negative]), const(margin)])], min=0.0)
    return _reduced(loss, _get(a, k, 7, "reduction", 1))


def _broadcast_tensors(a: Sequence[Any], k: dict[str, Any]) -> tuple[Node, ...]:
    tensors = tuple(a[0])
    if len({t.shape for t in tensors}) != 1:
        raise Unsupported("broadcast_tensors over different shapes has no IR form yet")
    return tensors


def _where(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return make("where", [a[0], _scalar(a[1]), _scalar(a[2])])


def _pow(a: Sequence[Any], k: dict[str, Any]) -> Node:
    if not isinstance(a[1], Node) and a[1] == 2:
        return make("mul", [a[0], a[0]])
    return make("pow", [_scalar(a[0]), _scalar(a[1])])


TABLE: dict[str, Handler] = {
    **{
        f"aten.{op}": _unary(op)
        for op in (
            "relu",
            "sigmoid",
            "tanh",
            "exp",
            "log",
            "sqrt",
            "rsqrt",
            "abs",
            "neg",
            "silu",
            "erf",
            "sin",
            "cos",
            "floor",
            "ceil",
            "round",
            "trunc",
            "logical_not",
        )
    },
    "aten.gelu": _gelu,
    "aten.bitwise_not": _bitwise_not,
    "aten.leaky_relu": _leaky_relu,
    "aten.hardtanh": _hardtanh,
    "aten.relu6": lambda a, k: make("clamp", [a[0]], min=0.0, max=6.0),
    "aten.clamp": _clamp,
    "aten.clip": _clamp,
    "aten.clamp_min": lambda a, k: _clamp([a[0], a[1], None], {}),
    "aten.clamp_max": lambda a, k: _clamp([a[0], None, a[1]], {}),
    "aten.elu": _elu,
    "aten.celu": _celu,
    "aten.threshold": _threshold,
    "aten.log2": _scaled_log(2.0),
    "aten.log10": _scaled_log(10.0),
    "aten.log1p": lambda a, k: make("log", [make("add", [const(1.0), a[0]])]),
    "aten.expm1": lambda a, k: make("sub", [make("exp", [a[0]]), const(1.0)]),
    "aten.exp2": lambda a, k: make("exp", [make("mul", [a[0], const(math.log(2.0))])]),
    "aten.addcmul": _addc("mul"),
    "aten.addcdiv": _addc("div"),
    "aten.lerp": _lerp,
    "aten.logaddexp": _logaddexp,
    "aten.any": _any_all("any"),
    "aten.all": _any_all("all"),
    "aten.var_mean": _stat_mean(False),
    "aten.std_mean": _stat_mean(True),
    "aten.sign": _sign,
    "aten.hardshrink": _hardshrink,
    "aten.softshrink": _softshrink,
    "aten.rrelu": _rrelu,
    "aten.selu": _selu,
    "aten.softplus": _softplus,
    "aten.mish": lambda a, k: composites.mish(a[0]),
    "aten.hardsigmoid": lambda a, k: composites.hardsigmoid(a[0]),
    "aten.hardswish": lambda a, k: composites.hardswish(a[0]),
    "aten.reciprocal": lambda a, k: make("div", [const(1.0), a[0]]),
    "aten.square": lambda a, k: make("mul", [a[0], a[0]]),
    "aten.pow": _pow,
    "aten.add": _add(1),
    "aten.sub": _add(-1),
    "aten.rsub": _rsub,
    "aten.mul": _binary("mul"),
    "aten.multiply": _binary("mul"),
    "aten.true_divide": _div,
    "aten.divide": _div,
    "aten.subtract": _add(-1),
    "aten.div": _div,
    "aten.maximum": _binary("maximum"),
    "aten.minimum": _binary("minimum"),
    **{f"aten.{op}": _binary(op) for op in ("gt", "lt", "ge", "le", "eq", "ne", "logical_and", "logical_or")},
    "aten.where": _where,
    "aten.sum": _reduce("sum"),
    "aten.mean": _reduce("mean"),
    "aten.amax": _amax("max"),
    "aten.amin": _amax("min"),
    "aten.max": _max_or_min("max"),
    "aten.min": _max_or_min("min"),
    "aten.prod": _prod,
    "aten.argmax": _arg("argmax"),
    "aten.argmin": _arg("argmin"),
    "aten.var": _var(False),
    "aten.std": _var(True),
    "aten.softmax": _softmax("softmax"),
    "aten._softmax": _softmax("softmax"),
    "aten.log_softmax": _softmax("log_softmax"),
    "aten._log_softmax": _softmax("log_softmax"),
    "aten.rms_norm": _rms_norm,
    "aten.cumsum": _cumsum,
    "aten.permute": _permute,
    "aten.transpose": _transpose,
    "aten.t": _t,
    "aten.numpy_T": _numpy_t,
    "aten.mT": lambda a, k: transpose(a[0], -2, -1),
    "aten.mm": _binary("matmul"),
    "aten.bmm": _binary("matmul"),
    "aten.linear": _linear,
    "aten.addmm": _addmm,
    "aten.baddbmm": _baddbmm,
    "aten.log_sigmoid": _log_sigmoid,
    "aten.cosine_similarity": _cosine_similarity,
    "aten.cosine_embedding_loss": _cosine_embedding,
    # a dtype/device assertion export records for `.float()` and the like: checks, computes nothing
    "aten._assert_tensor_metadata": lambda a, k: a[0],
    "aten.linalg_vector_norm": _vector_norm,
    "aten.linalg_norm": _linalg_norm(False),
    "aten.linalg_matrix_norm": _linalg_norm(True),
    "aten.broadcast_tensors": _broadcast_tensors,
    "aten.smooth_l1_loss": _smooth_l1,
    "aten.huber_loss": _huber,
    "aten.mse_loss": _mse,
    "aten.l1_loss": _l1,
    "aten.kl_div": _kl_div,
    "aten.triplet_margin_loss": _triplet,
    "aten.dropout": _dropout,
    "aten._to_copy": _to_copy,
    "aten.to": _to_copy,
    **{name: (lambda a, k: a[0]) for name in IDENTITY},
}
