"""ATen's sliding-window operators (convolutions, transposed convolutions, pools) of 2 and 3
spatial dimensions as the IR's own operators, with every argument PyTorch has (groups,
dilation, output_padding, ceil_mode, count_include_pad). The 1-D forms go through 2-D views
(aten_reshaping.py). The IR checks shapes and ranges; its `OpError` becomes the refusal.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..ir.graph import Node
from ..ir.ops import make
from .aten_ops import Handler, Unsupported, _get


def _tuple(v: Any) -> Any:
    return tuple(v) if isinstance(v, (list, tuple)) else v


def same_padding(weight: Node, spatial: int, dilation: Any, stride: Any) -> tuple[tuple[int, int], ...]:
    """padding='same' as (before, after) counts per spatial dim: the total `dilation * (k - 1)`
    split evenly, the odd one more after (as PyTorch pads)."""
    dil = dilation if isinstance(dilation, tuple) else (dilation,) * spatial
    if _tuple(stride) not in (1, (1,) * spatial):
        raise Unsupported("padding='same' needs stride 1 (as torch)")
    totals = [int(d) * (int(k) - 1) for k, d in zip(weight.shape[2:], dil)]
    return tuple((t // 2, t - t // 2) for t in totals)


def conv_input(x: Node, padding: Any, weight: Node, spatial: int, dilation: Any,
               stride: Any) -> tuple[Node, Any]:
    """The convolution's input and its symmetric `padding=` argument: padding='same' whose split
    is uneven (an even extent of the dilated kernel) becomes a zero pad of the input, then no
    padding."""
    if padding == "valid":
        return x, 0
    if padding == "same":
        pairs = same_padding(weight, spatial, dilation, stride)
        if all(lo == hi for lo, hi in pairs):
            return x, tuple(lo for lo, _ in pairs)
        return make("pad", [x], pads=((0, 0),) * (x.rank - spatial) + pairs, value=0.0), 0
    if isinstance(padding, str):
        raise Unsupported(f"padding={padding!r} is not a padding torch knows")
    return x, _tuple(padding)


def _conv(spatial: int) -> Handler:
    """aten.conv{2,3}d(input, weight, bias, stride, padding, dilation, groups)."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        x, w, b = a[0], a[1], _get(a, k, 2, "bias")
        stride, dilation = _tuple(_get(a, k, 3, "stride", 1)), _tuple(_get(a, k, 5, "dilation", 1))
        x, padding = conv_input(x, _get(a, k, 4, "padding", 0), w, spatial, dilation, stride)
        return make(
            f"conv{spatial}d",
            [x, w, *([b] if b is not None else [])],
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=int(_get(a, k, 6, "groups", 1)),
        )

    return handler


def _conv_transpose(spatial: int) -> Handler:
    """aten.conv_transpose{1,2,3}d(input, weight, bias, stride, padding, output_padding, groups,
    dilation): the IR has every rank of it."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        x, w, b = a[0], a[1], _get(a, k, 2, "bias")
        return make(
            f"conv_transpose{spatial}d",
            [x, w, *([b] if b is not None else [])],
            stride=_tuple(_get(a, k, 3, "stride", 1)),
            padding=_tuple(_get(a, k, 4, "padding", 0)),
            output_padding=_tuple(_get(a, k, 5, "output_padding", 0)),
            groups=int(_get(a, k, 6, "groups", 1)),
            dilation=_tuple(_get(a, k, 7, "dilation", 1)),
        )

    return handler


def _stride(a: Sequence[Any], k: dict[str, Any]) -> Any:
    """A pool's stride; torch's default (empty or None) is the kernel size."""
    stride = _get(a, k, 2, "stride")
    return None if stride in (None, [], ()) else _tuple(stride)


def _max_pool(spatial: int) -> Handler:
    """aten.max_pool{2,3}d(input, kernel_size, stride, padding, dilation, ceil_mode)."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        return make(
            f"max_pool{spatial}d",
            [a[0]],
            kernel_size=_tuple(_get(a, k, 1, "kernel_size")),
            stride=_stride(a, k),
            padding=_tuple(_get(a, k, 3, "padding", 0)),
            dilation=_tuple(_get(a, k, 4, "dilation", 1)),
            ceil_mode=bool(_get(a, k, 5, "ceil_mode", False)),
        )

    return handler


def _avg_pool(spatial: int) -> Handler:
    """aten.avg_pool{2,3}d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override)."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        if _get(a, k, 6, "divisor_override") is not None:
            raise Unsupported(f"avg_pool{spatial}d with divisor_override has no IR form yet")
        return make(
            f"avg_pool{spatial}d",
            [a[0]],
            kernel_size=_tuple(_get(a, k, 1, "kernel_size")),
            stride=_stride(a, k),
            padding=_tuple(_get(a, k, 3, "padding", 0)),
            ceil_mode=bool(_get(a, k, 4, "ceil_mode", False)),
            count_include_pad=bool(_get(a, k, 5, "count_include_pad", True)),
        )

    return handler


WINDOWS: dict[str, Handler] = {
    **{f"aten.conv{d}d": _conv(d) for d in (2, 3)},
    **{f"aten.conv_transpose{d}d": _conv_transpose(d) for d in (1, 2, 3)},
    **{f"aten.max_pool{d}d": _max_pool(d) for d in (2, 3)},
    **{f"aten.avg_pool{d}d": _avg_pool(d) for d in (2, 3)},
}
