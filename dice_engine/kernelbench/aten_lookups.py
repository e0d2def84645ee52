"""ATen operators that read their input at computed addresses, as IR gathers (which fuse into
one kernel with index arithmetic): gather, index_select, embedding, unfold (im2col), bilinear
upsampling, and the windows of adaptive pooling and nearest resampling that no plain pool or
broadcast has (`adaptive_pool_axis`, `nearest_axis`, used by aten_reshaping and aten_slicing)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from ..intent import composites
from ..ir.dtypes import F32, I64
from ..ir.graph import Node
from ..ir.ops import const, index, make, pair
from .aten_ops import Handler, Unsupported, _get


def _gather(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """aten.gather(input, dim, index, sparse_grad)."""
    return make("gather", [a[0], a[2]], dim=int(a[1]))


def _index_select(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return composites.index_select(a[0], int(a[1]), a[2])


def _embedding(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """aten.embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse): the forward
    is a row lookup whatever the last three say."""
    return composites.embedding(a[1], a[0])


def _affine_index(shape: tuple[int, ...], outer: int, step: int, inner: int, spacing: int) -> Node:
    """index(outer) * step + index(inner) * spacing over `shape`: a window's source coordinate."""
    return make("add", [make("mul", [index(shape, outer), const(step)]),
                        make("mul", [index(shape, inner), const(spacing)])])


def _im2col(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """aten.im2col(input, kernel_size, dilation, padding, stride) (F.unfold): [N, C*kh*kw, L],
    column (c, i, j) of output position (y, x) holding the zero-padded input at
    (y * stride + i * dilation, x * stride + j * dilation). Built as the padded input broadcast
    over the window, gathered along H at the window's rows, then along W at its columns."""
    x = a[0]
    if x.rank != 4:
        raise Unsupported(f"unfold of a rank-{x.rank} input has no IR form yet (an [N, C, H, W] input has)")
    (kh, kw), (dh, dw) = pair(a[1], "kernel_size"), pair(a[2], "dilation")
    (ph, pw), (sh, sw) = pair(a[3], "padding"), pair(a[4], "stride")
    n, c, h, w = (int(d) for d in x.shape)
    oh, ow = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise Unsupported(f"unfold's window ({kh}x{kw}, dilation {dh}x{dw}) is larger than the padded input")
    padded = make("pad", [x], pads=((0, 0), (0, 0), (ph, ph), (pw, pw)), value=0.0) if ph or pw else x
    hp, wp = h + 2 * ph, w + 2 * pw
    windows = composites.expand(make("reshape", [padded], shape=(n, c, 1, 1, hp, wp)), (n, c, kh, kw, hp, wp))
    rows = make("gather", [windows, _affine_index((n, c, kh, kw, oh, wp), 4, sh, 2, dh)], dim=4)
    cols = make("gather", [rows, _affine_index((n, c, kh, kw, oh, ow), 5, sw, 3, dw)], dim=5)
    return make("reshape", [cols], shape=(n, c * kh * kw, oh * ow))


def _source(shape: tuple[int, ...], dim: int, size_in: int, size_out: int, align_corners: bool,
            scale: float | None) -> Node:
    """PyTorch's source coordinate of each output index along `dim` of an upsampling (a float
    tensor over `shape`): o * (in - 1) / (out - 1) with aligned corners, else
    max((o + 0.5) * in / out - 0.5, 0) (in / out replaced by 1 / scale_factor when given)."""
    o = make("cast", [index(shape, dim)], dtype=F32)
    if align_corners:
        return make("mul", [o, const((size_in - 1) / (size_out - 1) if size_out > 1 else 0.0)])
    ratio = 1.0 / scale if scale else size_in / size_out
    centred = make("sub", [make("mul", [make("add", [o, const(0.5)]), const(float(ratio))]), const(0.5)])
    return make("clamp", [centred], min=0.0)


def _neighbours(src: Node, size_in: int) -> tuple[Node, Node, Node]:
    """The input indices below and above a source coordinate (the upper one kept inside) and
    the coordinate's fraction past the lower."""
    below = make("floor", [src])
    low = make("cast", [below], dtype=I64)
    high = make("minimum", [make("add", [low, const(1)]), const(size_in - 1)])
    return low, high, make("sub", [src, below])


def _bilinear(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """aten.upsample_bilinear2d(input, output_size, align_corners, scales_h, scales_w): each
    output mixes the four inputs around its source point, weighted by the distances (the
    coordinate is continuous in the output index, so float rounding moves values by an ulp,
    never to another pixel's). Rows are gathered along H first ([N, C, OH, W]), then columns
    along W."""
    x = a[0]
    if x.rank != 4:
        raise Unsupported(f"bilinear upsampling of a rank-{x.rank} input has no IR form yet")
    n, c, h, w = (int(d) for d in x.shape)
    size = _get(a, k, 1, "output_size")
    align = bool(_get(a, k, 2, "align_corners", False))
    if size:
        scale_h, scale_w = _get(a, k, 3, "scales_h"), _get(a, k, 4, "scales_w")
        oh, ow = (int(s) for s in size)
    else:          # the .vec form: scale factors, the size their floor
        factors = _get(a, k, 3, "scale_factors")
        if not factors or len(factors) != 2:
            raise Unsupported("bilinear upsampling needs an output size or two scale factors")
        scale_h, scale_w = (float(f) for f in factors)
        oh, ow = int(h * scale_h), int(w * scale_w)
    rows_shape, out = (n, c, oh, w), (n, c, oh, ow)
    y0, y1, _ = _neighbours(_source(rows_shape, 2, h, oh, align, scale_h), h)
    _, _, fy = _neighbours(_source(out, 2, h, oh, align, scale_h), h)
    x0, x1, fx = _neighbours(_source(out, 3, w, ow, align, scale_w), w)

    def mix(row: Node) -> Node:     # one source row, blended between its two columns
        picked = make("gather", [x, row], dim=2)
        left, right = make("gather", [picked, x0], dim=3), make("gather", [picked, x1], dim=3)
        return make("add", [left, make("mul", [make("sub", [right, left]), fx])])

    top, bottom = mix(y0), mix(y1)
    return make("add", [top, make("mul", [make("sub", [bottom, top]), fy])])


def adaptive_pool_axis(x: Node, axis: int, size_out: int, kind: str) -> Node:
    """Adaptive average or max pooling of one axis (PyTorch's windows: output i covers
    [floor(i * n / m), ceil((i + 1) * n / m)) of the n inputs, m outputs, windows of unequal
    length): the axis is gathered at each window's positions along a new window axis of the
    longest window's length, positions past a window's end masked out, then reduced. Windows
    are separable, so pooling several axes is this once per axis."""
    n = int(x.shape[axis])
    longest = max(-(-(i + 1) * n // size_out) - (i * n // size_out) for i in range(size_out))
    shape = tuple(int(d) for d in x.shape)
    windows = shape[:axis] + (size_out, longest) + shape[axis + 1:]
    start, end = _window(windows, axis, n, size_out)
    at = make("add", [start, index(windows, axis + 1)])
    spread = composites.expand(make("reshape", [x], shape=shape[:axis + 1] + (1,) + shape[axis + 1:]),
                               shape[:axis + 1] + (longest,) + shape[axis + 1:])
    picked = make("gather", [spread, make("minimum", [at, const(n - 1)])], dim=axis)
    inside = make("lt", [at, end])
    if kind == "max":
        return make("max", [make("where", [inside, picked, const(float("-inf"))])], dim=axis + 1)
    total = make("sum", [make("where", [inside, picked, const(0.0)])], dim=axis + 1)
    first, last = _window(shape[:axis] + (size_out,) + shape[axis + 1:], axis, n, size_out)
    return make("div", [total, make("cast", [make("sub", [last, first])], dtype=x.dtype)])


def _window(shape: tuple[int, ...], axis: int, n: int, m: int) -> tuple[Node, Node]:
    """floor(i * n / m) and ceil((i + 1) * n / m) over `shape`, i the index along `axis` (exact:
    the quotients are at least 1/m from an integer they do not equal, far beyond float error)."""
    i = index(shape, axis)

    def rounded(op: str, numerator: Node) -> Node:
        quotient = make("div", [make("mul", [numerator, const(n)]), const(m)])
        return make("cast", [make(op, [quotient])], dtype=I64)

    return rounded("floor", i), rounded("ceil", make("add", [i, const(1)]))


MAX_NEAREST_EXCEPTIONS = 16


def nearest_axis(x: Node, axis: int, size_out: int, scale: float | None) -> Node:
    """Nearest resampling of one axis to `size_out` as PyTorch computes it: output o reads input
    min(floor(o * s), n - 1) with s the float32 of n / size_out (or of 1 / scale_factor), in
    float32 arithmetic. The gather's index is floor(o * p / q) for the fraction p / q nearest s
    with a small denominator (n / size_out itself when sizes are given), exact in any
    arithmetic while o * p < 2^24; the few outputs where float32 rounding moves PyTorch's floor
    (o * s just under an integer rounds up to it) are patched to PyTorch's value, found here, at
    translation, by evaluating both."""
    n = int(x.shape[axis])
    step = np.float32(1.0 / scale) if scale else np.float32(n) / np.float32(size_out)
    ratio = Fraction(n, size_out) if not scale else Fraction(float(step)).limit_denominator(1024)
    p, q = ratio.numerator, ratio.denominator
    if size_out * max(p, 1) >= 1 << 24:
        raise Unsupported(f"nearest resampling of {n} to {size_out} is too large for exact float32 indices")
    outputs = np.arange(size_out)
    torch_index = np.minimum(np.floor(outputs.astype(np.float32) * step), n - 1).astype(np.int64)
    moved = np.nonzero(torch_index != np.minimum(outputs * p // q, n - 1))[0]
    if len(moved) > MAX_NEAREST_EXCEPTIONS:
        raise Unsupported(f"nearest resampling of {n} to {size_out}: float32 rounding moves {len(moved)} of "
                          "PyTorch's indices off any simple fraction; no IR form yet")
    shape = tuple(int(d) for d in x.shape[:axis]) + (size_out,) + tuple(int(d) for d in x.shape[axis + 1:])
    o = index(shape, axis)
    quotient = make("div", [make("mul", [o, const(p)]), const(q)])
    source = make("minimum", [make("cast", [make("floor", [quotient])], dtype=I64), const(n - 1)])
    for out_index in moved:
        moved_here = make("eq", [o, const(int(out_index))])
        source = make("where", [moved_here, const(int(torch_index[out_index])), source])
    return make("gather", [x, source], dim=axis)


LOOKUPS: dict[str, Handler] = {
    "aten.gather": _gather,
    "aten.index_select": _index_select,
    "aten.embedding": _embedding,
    "aten.im2col": _im2col,
    "aten.upsample_bilinear2d": _bilinear,
}
