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


def same_padding(weight: Node, spatial: int, dilation: Any, stride: Any) -> tuple[int, ...]:
    """padding='same' as explicit symmetric padding: the total `dilation * (k - 1)` split evenly
    (PyTorch pads one more on the right when it is odd, which no symmetric padding is)."""
    dil = dilation if isinstance(dilation, tuple) else (dilation,) * spatial
    if _tuple(stride) not in (1, (1,) * spatial):
        raise Unsupported("padding='same' needs stride 1 (as torch)")
    pads = []
    for k, d in zip(weight.shape[2:], dil):
        total = int(d) * (int(k) - 1)
        if total % 2:
            raise Unsupported(
                "padding='same' with an even extent of the dilated kernel pads unevenly; no IR form yet"
            )
        pads.append(total // 2)
    return tuple(pads)


def conv_padding(padding: Any, weight: Node, spatial: int, dilation: Any, stride: Any) -> Any:
    if padding == "valid":
        return 0
    if padding == "same":
        return same_padding(weight, spatial, dilation, stride)
    if isinstance(padding, str):
        raise Unsupported(f"padding={padding!r} is not a padding torch knows")
    return _tuple(padding)


def _conv(spatial: int) -> Handler:
    """aten.conv{2,3}d(input, weight, bias, stride, padding, dilation, groups)."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        x, w, b = a[0], a[1], _get(a, k, 2, "bias")
        stride, dilation = _tuple(_get(a, k, 3, "stride", 1)), _tuple(_get(a, k, 5, "dilation", 1))
        return make(
            f"conv{spatial}d",
            [x, w, *([b] if b is not None else [])],
            stride=stride,
            padding=conv_padding(_get(a, k, 4, "padding", 0), w, spatial, dilation, stride),
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
