"""ATen operators lowered through views: the IR form reads the data with another shape.

A handler here also gets `view(node, shape[, offset])`, which returns the node's value read with
another shape of the same element count, or with `offset` the contiguous part of it that starts
there (a computed value is written to memory first). 1-D convolution
and pooling become their 2-D forms over a height of 1; normalizations over several dimensions
become a row normalization of a 2-D view; batch, instance and group norm take their mean and
variance from one `moments` kernel (one pass over the data) and normalize in one more;
logsumexp drops its kept dimensions through a view.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from ..intent import composites
from ..ir.graph import Node
from ..ir.ops import broadcast_shapes, const, index, make, normalize_dim
from ..ir.statistics import normalize
from ..sketches.attention import match as match_attention
from .aten_ops import Absent, Unsupported, _get
from .aten_slicing import broadcast_to
from .aten_lookups import adaptive_pool_axis
from .aten_windows import conv_input

View = Callable[..., Node]  # view(node, shape[, offset]): a buffer over node's written value (or a part)
ReshapingHandler = Callable[[Sequence[Any], dict[str, Any], View], Node]


def _shape(n: Node) -> tuple[int, ...]:
    return tuple(int(d) for d in n.shape)


def _one(v: Any, name: str) -> int:
    """A 1-D operator's int-or-[int] argument."""
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise Unsupported(f"{name} {list(v)} is not one value")
        return int(v[0])
    return int(v)


def _conv1d(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    x, w, b = a[0], a[1], _get(a, k, 2, "bias")
    stride = _one(_get(a, k, 3, "stride", 1), "stride")
    dilation = _one(_get(a, k, 5, "dilation", 1), "dilation")
    x, padding = conv_input(x, _get(a, k, 4, "padding", 0), w, 1, (dilation,), stride)
    (n, c, length), (kout, cin_per_group, r) = _shape(x), _shape(w)
    y = make(
        "conv2d",
        [view(x, (n, c, 1, length)), view(w, (kout, cin_per_group, 1, r)), *([b] if b is not None else [])],
        stride=(1, stride),
        padding=(0, _one(padding, "padding")),
        dilation=(1, dilation),
        groups=int(_get(a, k, 6, "groups", 1)),
    )
    return view(y, (n, kout, _shape(y)[3]))


def _pool1d(op: str) -> ReshapingHandler:
    """max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode) and
    avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad) as their
    2-D forms over a height of 1."""

    def handler(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
        x = a[0]
        kernel = _one(a[1], "kernel_size")
        stride = _get(a, k, 2, "stride")
        stride = kernel if stride in (None, [], ()) else _one(stride, "stride")
        padding = _one(_get(a, k, 3, "padding", 0), "padding")
        if op == "max_pool2d":
            extra: dict[str, Any] = {
                "dilation": (1, _one(_get(a, k, 4, "dilation", 1), "dilation")),
                "ceil_mode": bool(_get(a, k, 5, "ceil_mode", False)),
            }
        else:
            extra = {
                "ceil_mode": bool(_get(a, k, 4, "ceil_mode", False)),
                "count_include_pad": bool(_get(a, k, 5, "count_include_pad", True)),
            }
        n, c, length = _shape(x)
        y = make(
            op,
            [view(x, (n, c, 1, length))],
            kernel_size=(1, kernel),
            stride=(1, stride),
            padding=(0, padding),
            **extra,
        )
        return view(y, (n, c, _shape(y)[3]))

    return handler


def _statistics(x: Node, dims: tuple[int, ...], view: View) -> tuple[Node, Node]:
    """Mean and biased variance of x over `dims` (kept as size 1): the two halves of one written
    `moments` result (one pass over x, Welford), each a buffer the normalization reads as is."""
    stats = make("moments", [x], dim=dims)
    keep = _shape(stats)[1:]
    return view(stats, keep, offset=0), view(stats, keep, offset=math.prod(keep))


def _row_norm(x: Node, inner: int, eps: float, view: View) -> Node:
    """layer_norm without affine over the last `inner` elements of x's rows, in x's shape."""
    shape = _shape(x)
    rows = math.prod(shape) // inner
    normed = make("layer_norm", [view(x, (rows, inner))], eps=eps)
    return view(normed, shape)


def _affine(y: Node, weight: Node | None, bias: Node | None, view: View) -> Node:
    """y * weight + bias with per-channel (dim 1) parameters."""
    channel_shape = (_shape(y)[1],) + (1,) * (y.rank - 2)
    if weight is not None:
        y = make("mul", [y, view(weight, channel_shape)])
    if bias is not None:
        y = make("add", [y, view(bias, channel_shape)])
    return y


def _layer_norm(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    x, normalized = a[0], tuple(_get(a, k, 1, "normalized_shape"))
    weight, bias, eps = _get(a, k, 2, "weight"), _get(a, k, 3, "bias"), _get(a, k, 4, "eps", 1e-5)
    if len(normalized) == 1:  # the IR's own form
        if bias is not None and weight is None:
            raise Unsupported("layer_norm with a bias but no weight has no IR form yet")
        return make(
            "layer_norm",
            [x, *[p for p in (weight, bias) if p is not None]],
            normalized_shape=normalized,
            eps=eps,
        )
    inner = math.prod(normalized)
    y = _row_norm(x, inner, eps, view)
    if weight is not None:
        y = make("mul", [y, weight])  # weight and bias have the normalized shape: they broadcast
    if bias is not None:
        y = make("add", [y, bias])
    return y


def _group_norm(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    """Statistics per (sample, group) over x viewed as [N, G, C/G · spatial], folded with the
    affine into a scale and a shift per (sample, channel) (two small kernels over N·C values,
    as ATen's own kernel does), so the pass over x is y = x · scale + shift broadcast over the
    spatial axes: elementwise, and what follows fuses into it."""
    x, groups = a[0], int(_get(a, k, 1, "num_groups"))
    weight, bias, eps = _get(a, k, 2, "weight"), _get(a, k, 3, "bias"), _get(a, k, 4, "eps", 1e-5)
    shape = _shape(x)
    n, c = shape[0], shape[1]
    per_group = (n, groups, c // groups)
    grouped = view(x, (n, groups, math.prod(shape[1:]) // groups))
    mean, var = _statistics(grouped, (2,), view)
    inv = make("rsqrt", [make("add", [var, const(float(eps))])])
    scale = (broadcast_to(inv, per_group) if weight is None
             else make("mul", [inv, view(weight, per_group[1:])]))
    shift = make("neg", [make("mul", [mean, scale])])
    if bias is not None:
        shift = make("add", [shift, view(bias, per_group[1:])])
    channels = (n, c) + (1,) * (len(shape) - 2)
    return make("add", [make("mul", [x, view(scale, channels)]), view(shift, channels)])


def _instance_norm(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    x, weight, bias = a[0], _get(a, k, 1, "weight"), _get(a, k, 2, "bias")
    if not _get(a, k, 5, "use_input_stats", True):
        raise Unsupported("instance_norm with running statistics has no IR form yet")
    mean, var = _statistics(x, tuple(range(2, x.rank)), view)
    y = normalize(x, mean, var, float(_get(a, k, 7, "eps", 1e-5)))
    return _affine(y, weight, bias, view)


def _logsumexp(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    x = a[0]
    dims = _get(a, k, 1, "dim")
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
    keep = bool(_get(a, k, 2, "keepdim", False))
    out = composites.logsumexp(x, dims, keepdim=True)
    if keep:
        return out
    reduced = {normalize_dim(int(d), x.rank) for d in dims}
    return view(out, tuple(s for i, s in enumerate(_shape(x)) if i not in reduced))


def _batch_norm(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    """Training mode normalizes with the batch's statistics (over every dim but the channel's);
    evaluation mode with the running ones. The running statistics' update in training mode is
    module state the result does not read; it is not repeated (the report says so)."""
    x, weight, bias, running_mean, running_var = a[0], a[1], a[2], a[3], a[4]
    training, eps = bool(_get(a, k, 5, "training")), float(_get(a, k, 7, "eps", 1e-5))
    channel_shape = (_shape(x)[1],) + (1,) * (x.rank - 2)
    if training or running_mean is None:   # the batch's statistics, per channel
        mean, var = _statistics(x, tuple(i for i in range(x.rank) if i != 1), view)
    else:
        mean, var = view(running_mean, channel_shape), view(running_var, channel_shape)
    return _affine(normalize(x, mean, var, eps), weight, bias, view)


def _matmul(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    """matmul of any rank: the IR's 2-D/3-D forms, leading batch dims flattened through views."""
    x, w = a[0], a[1]
    if x.rank == 1 and w.rank == 1:  # a dot product
        return make("sum", [make("mul", [x, w])])
    if w.rank == 1:  # (..., K) @ (K,): w as a column, the column dimension dropped
        y = _matmul([x, view(w, (_shape(w)[0], 1))], k, view)
        return view(y, _shape(y)[:-1])
    if x.rank == 1:  # (K,) @ (..., K, N): x as a row, the row dimension dropped
        y = _matmul([view(x, (1, _shape(x)[0])), w], k, view)
        return view(y, _shape(y)[:-2] + _shape(y)[-1:])
    if x.rank <= 3 and w.rank <= 3:
        return make("matmul", [x, w])
    xs, ws = _shape(x), _shape(w)
    batch = broadcast_shapes(xs[:-2], ws[:-2])
    if w.rank > 2 and batch is not None and (xs[:-2] != batch or ws[:-2] != batch):
        # batch dims that broadcast: both operands broadcast to the whole batch first
        x, w = broadcast_to(x, tuple(batch) + xs[-2:]), broadcast_to(w, tuple(batch) + ws[-2:])
        return _matmul([x, w], k, view)
    if x.rank >= 3 and w.rank == 2:  # (..., M, K) @ (K, N): rows of every batch at once
        y = make("matmul", [view(x, (math.prod(xs[:-1]), xs[-1])), w])
        return view(y, xs[:-1] + (ws[-1],))
    if x.rank == w.rank and x.rank > 3 and xs[:-2] == ws[:-2]:  # one batch dim
        batch = math.prod(xs[:-2])
        y = make("matmul", [view(x, (batch,) + xs[-2:]), view(w, (batch,) + ws[-2:])])
        return view(y, xs[:-2] + (xs[-2], ws[-1]))
    raise Unsupported(f"matmul of shapes {list(xs)} and {list(ws)} has no IR form yet")


def _attention(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    """scaled_dot_product_attention as softmax(Q Kᵀ · scale) V: two matmuls and a row softmax."""
    q, key, v = a[0], a[1], a[2]
    if _get(a, k, 3, "attn_mask") is not None:
        raise Unsupported("attention with an attn_mask has no IR form yet (is_causal has)")
    causal = bool(_get(a, k, 5, "is_causal", False))
    if _get(a, k, 4, "dropout_p", 0.0) != 0.0:
        raise Unsupported("attention dropout draws random numbers; DICE has no random kernels")
    if _get(a, k, 7, "enable_gqa", False):
        raise Unsupported("grouped-query attention has no IR form yet")
    scale = _get(a, k, 6, "scale")
    scale = 1.0 / math.sqrt(_shape(q)[-1]) if scale is None else float(scale)
    keys_t = make("permute", [key], dims=tuple(range(key.rank - 2)) + (key.rank - 1, key.rank - 2))

    def masked(scores: Node) -> Node:
        """is_causal: key j is seen by query i when j <= i (torch's top-left aligned tril)."""
        if not causal:
            return scores
        seen = make("le", [index(scores.shape, -1), index(scores.shape, -2)])
        return make("where", [seen, scores, const(float("-inf"))])

    # the whole attention as one expression, where the fused attention sketch takes it
    scores = masked(make("mul", [make("matmul", [q, keys_t]), const(scale)]))
    fused = make("matmul", [make("softmax", [scores], dim=-1), v])
    if not isinstance(match_attention(fused), str):
        return fused
    scores = masked(make("mul", [_matmul([q, keys_t], {}, view), const(scale)]))
    return _matmul([make("softmax", [scores], dim=-1), v], {}, view)


def _adaptive_pool(kind: str, spatial: int) -> ReshapingHandler:
    """Adaptive average or max pooling: where the output size divides the input a plain pool
    with kernel = stride = input / output (1-D through a 2-D view), or a mean / max over the
    spatial dims for an output of one element per channel; otherwise windowed gathers per axis
    (`aten_lookups.adaptive_pool_axis`). The max form also gives its indices in ATen; they have
    no IR form (reading them is refused)."""

    def handler(a: Sequence[Any], k: dict[str, Any], view: View) -> Any:
        x = a[0]
        out = list(a[1]) if isinstance(a[1], (list, tuple)) else [a[1]] * spatial
        sizes = _shape(x)[-spatial:]
        if any(o is None for o in out):  # None keeps the input's size
            out = [s if o is None else o for s, o in zip(sizes, out)]
        if all(o == 1 for o in out):
            op = "mean" if kind == "avg" else "max"
            y = make(op, [x], dim=tuple(range(x.rank - spatial, x.rank)), keepdim=True)
        elif all(s % o == 0 for s, o in zip(sizes, out)):
            kernel = tuple(s // o for s, o in zip(sizes, out))
            if spatial == 1:
                lead = _shape(x)[:-1]
                flat = view(x, (math.prod(lead[:-1]) if len(lead) > 1 else 1, lead[-1], 1, sizes[0]))
                pooled = make(f"{kind}_pool2d", [flat], kernel_size=(1,) + kernel, stride=(1,) + kernel,
                              padding=(0, 0))
                y = view(pooled, lead + (out[0],))
            else:
                y = make(f"{kind}_pool{spatial}d", [x], kernel_size=kernel, stride=kernel,
                         padding=(0,) * spatial)
        else:      # windows of unequal length: one windowed gather and reduction per axis
            y = x
            for axis, size_out in zip(range(x.rank - spatial, x.rank), out):
                if int(x.shape[axis]) != size_out:
                    y = adaptive_pool_axis(y, axis, int(size_out), kind)
        return y if kind == "avg" else (y, _NO_INDICES)

    return handler


_NO_INDICES = Absent("the indices adaptive_max_pool returns have no IR form yet")


RESHAPING: dict[str, ReshapingHandler] = {
    "aten.matmul": _matmul,
    "aten.scaled_dot_product_attention": _attention,
    **{f"aten.adaptive_{kind}_pool{d}d": _adaptive_pool(kind, d)
       for kind in ("avg", "max") for d in (1, 2, 3)},
    "aten.conv1d": _conv1d,
    "aten.max_pool1d": _pool1d("max_pool2d"),
    "aten.avg_pool1d": _pool1d("avg_pool2d"),
    "aten.layer_norm": _layer_norm,
    "aten.group_norm": _group_norm,
    "aten.instance_norm": _instance_norm,
    "aten.logsumexp": _logsumexp,
    "aten.batch_norm": _batch_norm,
}
