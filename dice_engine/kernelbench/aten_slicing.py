"""ATen operators that re-address elements, as IR index maps that fuse into their consumers:
slices (narrow, slice with a step, select, split, chunk, unbind), concatenation and stacking,
padding (constant, reflect, replicate, circular), broadcasting copies (expand, repeat), nearest
upsampling by whole factors, pixel_shuffle, and constant tensors (zeros_like, full, ...).

Nothing here copies: a slice reads its argument at `start + step * i`, a concatenation picks
the piece whose range holds the index (each piece padded to the whole extent, so every read is
in bounds), a broadcast reads the size-1 dimension at 0. A heavy value read this way is written
to memory first by the partition (`lower.py`), as any value read at other indices.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..intent import composites
from ..ir.dtypes import DTYPES, DType, promote
from ..ir.graph import Node
from ..ir.ops import const, index, make, normalize_dim
from .aten_lookups import nearest_axis
from .aten_ops import Handler, Unsupported, _get, _scalar


def _shape(n: Node) -> tuple[int, ...]:
    return tuple(int(d) for d in n.shape)


def reshape(x: Node, shape: Sequence[int]) -> Node:
    """`x` read with another shape of the same element count, as an IR view (fuses; no copy)."""
    shape = tuple(int(d) for d in shape)
    return x if _shape(x) == shape else make("reshape", [x], shape=shape)


def broadcast_to(x: Node, shape: Sequence[int]) -> Node:
    """`x` broadcast to `shape` (PyTorch's rules): a select whose both branches are `x`."""
    shape = tuple(int(d) for d in shape)
    if _shape(x) == shape:
        return x
    if not shape:
        raise Unsupported("broadcasting to a 0-d tensor has no IR form")
    return composites.expand(x, shape)


def full(shape: Sequence[int], value: float | int | bool, dtype: DType) -> Node:
    """A constant tensor of `shape`."""
    shape = tuple(int(d) for d in shape)
    if not shape:
        raise Unsupported("a 0-d constant tensor has no IR form yet")
    filled = make("where", [make("ge", [index(shape, 0), const(0)]), const(value), const(value)])
    return filled if filled.dtype == dtype else make("cast", [filled], dtype=dtype)


def fill_value(x: Node) -> float | int | bool | None:
    """The value of a constant tensor made by `full` (zeros_like, ones, ...), else None."""
    inner = x.args[0] if x.op == "cast" else x
    if inner.op != "where" or inner.args[0].op != "ge" or inner.args[0].args[0].op != "index":
        return None
    a, b = inner.args[1], inner.args[2]
    if a.op != "const" or b.op != "const" or a.value != b.value:
        return None
    value = a.value
    return value if x.op != "cast" else (float(value) if x.dtype.is_float else value)


def _slice_of(x: Node, dim: int, start: int | None, end: int | None, step: int = 1) -> Node:
    dim = normalize_dim(dim, x.rank)
    if start in (None, 0) and (end is None or end >= _shape(x)[dim]) and step == 1:
        return x
    return make("slice", [x], dim=dim, start=start, end=end, step=step)


def _slice(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return _slice_of(
        a[0], int(_get(a, k, 1, "dim", 0)), _get(a, k, 2, "start"), _get(a, k, 3, "end"),
        int(_get(a, k, 4, "step", 1)),
    )


def _narrow(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, dim = a[0], normalize_dim(int(_get(a, k, 1, "dim")), a[0].rank)
    start, length = int(_get(a, k, 2, "start")), int(_get(a, k, 3, "length"))
    start = start + _shape(x)[dim] if start < 0 else start
    return _slice_of(x, dim, start, start + length)


def select(x: Node, dim: int, i: int) -> Node:
    """x.select(dim, i): a one-element slice read without that dimension."""
    dim = normalize_dim(dim, x.rank)
    size = _shape(x)[dim]
    if not -size <= i < size:
        raise Unsupported(f"index {i} is out of range for dim {dim} of size {size}")
    i %= size
    piece = make("slice", [x], dim=dim, start=i, end=i + 1, step=1)
    return reshape(piece, _shape(x)[:dim] + _shape(x)[dim + 1:])


def _select(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return select(a[0], int(_get(a, k, 1, "dim")), int(_get(a, k, 2, "index")))


def _pieces(x: Node, dim: int, sizes: Sequence[int]) -> tuple[Node, ...]:
    dim = normalize_dim(dim, x.rank)
    if sum(sizes) != _shape(x)[dim]:
        raise Unsupported(f"split sizes {list(sizes)} do not sum to the size {_shape(x)[dim]} of dim {dim}")
    out, start = [], 0
    for size in sizes:
        if size == 0:
            raise Unsupported("a split into an empty piece has no IR form yet")
        out.append(_slice_of(x, dim, start, start + size))
        start += size
    return tuple(out)


def _split(a: Sequence[Any], k: dict[str, Any]) -> tuple[Node, ...]:
    """split(x, split_size or sizes, dim): pieces of `split_size` (the last one shorter)."""
    x, size, dim = a[0], _get(a, k, 1, "split_size"), int(_get(a, k, 2, "dim", 0))
    if isinstance(size, (list, tuple)):
        return _pieces(x, dim, [int(s) for s in size])
    total = _shape(x)[normalize_dim(dim, x.rank)]
    size = int(size)
    return _pieces(x, dim, [min(size, total - s) for s in range(0, total, size)])


def _split_with_sizes(a: Sequence[Any], k: dict[str, Any]) -> tuple[Node, ...]:
    return _pieces(a[0], int(_get(a, k, 2, "dim", 0)), [int(s) for s in _get(a, k, 1, "split_sizes")])


def _chunk(a: Sequence[Any], k: dict[str, Any]) -> tuple[Node, ...]:
    x, chunks, dim = a[0], int(_get(a, k, 1, "chunks")), int(_get(a, k, 2, "dim", 0))
    total = _shape(x)[normalize_dim(dim, x.rank)]
    each = -(-total // chunks)
    return _pieces(x, dim, [min(each, total - s) for s in range(0, total, each)])


def _unbind(a: Sequence[Any], k: dict[str, Any]) -> tuple[Node, ...]:
    x, dim = a[0], int(_get(a, k, 1, "dim", 0))
    return tuple(select(x, dim, i) for i in range(_shape(x)[normalize_dim(dim, x.rank)]))


def concatenate(tensors: Sequence[Node], dim: int) -> Node:
    """torch.cat: each piece padded to the whole extent along `dim`, the one whose range holds
    the index selected (exact: the other pieces' values are never mixed in)."""
    pieces = [t for t in tensors if not (t.rank == 1 and _shape(t) == (0,))]  # legacy empty tensors
    if not pieces:
        raise Unsupported("concatenating only empty tensors has no IR form")
    dim = normalize_dim(dim, pieces[0].rank)
    dtype = pieces[0].dtype
    for p in pieces[1:]:
        dtype = promote(dtype, p.dtype)
    pieces = [p if p.dtype == dtype else make("cast", [p], dtype=dtype) for p in pieces]
    if len(pieces) == 1:
        return pieces[0]
    if (ends := _constant_ends(pieces, dim)) is not None:
        lead, middle, trail, value = ends
        pads = [(0, 0)] * pieces[0].rank
        pads[dim] = (lead, trail)
        return constant_pad(concatenate(middle, dim), pads, value)
    sizes = [_shape(p)[dim] for p in pieces]
    total = sum(sizes)
    shape = _shape(pieces[0])[:dim] + (total,) + _shape(pieces[0])[dim + 1:]
    position = index(shape, dim)
    ends = [sum(sizes[: i + 1]) for i in range(len(sizes))]

    def padded(i: int) -> Node:
        pads = [(0, 0)] * len(shape)
        pads[dim] = (ends[i] - sizes[i], total - ends[i])
        return make("pad", [pieces[i]], pads=tuple(pads), value=0)

    out = padded(len(pieces) - 1)
    for i in reversed(range(len(pieces) - 1)):
        out = make("where", [make("lt", [position, const(ends[i])]), padded(i), out])
    return out


def _constant_ends(pieces: list[Node], dim: int) -> tuple[int, list[Node], int, Any] | None:
    """Leading and trailing pieces that are one constant (a zero column before a cumsum: the
    exclusive-scan idiom): (their extents before, the pieces between, after, the value); None
    when there are none or every piece is one."""
    values = [fill_value(p) for p in pieces]
    value = next((v for v in (values[0], values[-1]) if v is not None), None)
    if value is None:
        return None
    first = next((i for i, v in enumerate(values) if v != value), len(pieces))
    last = next((i for i in reversed(range(len(pieces))) if values[i] != value), -1)
    if first > last:
        return None
    lead = sum(_shape(p)[dim] for p in pieces[:first])
    trail = sum(_shape(p)[dim] for p in pieces[last + 1:])
    return lead, pieces[first:last + 1], trail, value


SCAN_IDENTITY = {"cumsum": 0, "cumprod": 1}


def constant_pad(x: Node, pads: Sequence[tuple[int, int]], value: Any) -> Node:
    """make("pad") with a constant, except that padding a scan with its identity (0 around a
    cumsum, 1 around a cumprod), none of it after the scanned dim's end, is the scan of the
    padded operand: those positions scan to the identity. The exclusive-scan idiom (a zero
    column, then the cumsum) so stays one scan whose operand read is a view."""
    pads = tuple((int(lo), int(hi)) for lo, hi in pads)
    if (x.op in SCAN_IDENTITY and value == SCAN_IDENTITY[x.op] and pads[x.attr("dim")][1] == 0
            and not isinstance(value, bool)):
        inner = make("pad", [x.args[0]], pads=pads, value=value)
        return make(x.op, [inner], dim=x.attr("dim"))
    return make("pad", [x], pads=pads, value=value)


def _cat(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return concatenate(list(a[0]), int(_get(a, k, 1, "dim", 0)))


def _stack(a: Sequence[Any], k: dict[str, Any]) -> Node:
    tensors = list(a[0])
    dim = normalize_dim(int(_get(a, k, 1, "dim", 0)), tensors[0].rank + 1)
    return concatenate([reshape(t, _shape(t)[:dim] + (1,) + _shape(t)[dim:]) for t in tensors], dim)


def pad(x: Node, flat: Sequence[int], value: float, mode: str = "constant") -> Node:
    """F.pad: `flat` holds (before, after) pairs from the last dimension back; negative counts
    crop (a slice)."""
    if len(flat) % 2 or len(flat) // 2 > x.rank:
        raise Unsupported(f"padding {list(flat)} does not fit a tensor of rank {x.rank}")
    pads = [(0, 0)] * x.rank
    for i in range(len(flat) // 2):
        pads[x.rank - 1 - i] = (int(flat[2 * i]), int(flat[2 * i + 1]))
    for d, (lo, hi) in enumerate(pads):
        if lo < 0 or hi < 0:
            x = _slice_of(x, d, max(-lo, 0), _shape(x)[d] - max(-hi, 0))
    pads = [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    if all(p == (0, 0) for p in pads):
        return x
    if mode == "constant":
        return constant_pad(x, pads, value)
    return make("pad", [x], pads=tuple(pads), mode=mode)


def _constant_pad(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return pad(a[0], list(_get(a, k, 1, "pad")), _get(a, k, 2, "value", 0))


def _pad(a: Sequence[Any], k: dict[str, Any]) -> Node:
    mode = _get(a, k, 2, "mode", "constant")
    value = _get(a, k, 3, "value")
    return pad(a[0], list(_get(a, k, 1, "pad")), 0 if value is None else value, mode)


def _mode_pad(mode: str) -> Handler:
    """aten.reflection_padNd / replication_padNd(x, padding)."""
    return lambda a, k: pad(a[0], list(_get(a, k, 1, "padding")), 0, mode)


def _expand(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, sizes = a[0], list(_get(a, k, 1, "size"))
    lead = len(sizes) - x.rank
    shape = [(_shape(x)[i - lead] if s == -1 else int(s)) for i, s in enumerate(sizes)]
    return broadcast_to(x, shape)


def _repeat(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """x.repeat(r0, r1, ...): each dimension tiled, as a broadcast over an inserted dimension
    before it, read back merged."""
    x, reps = a[0], [int(r) for r in _get(a, k, 1, "repeats")]
    if len(reps) < x.rank:
        raise Unsupported(f"repeat needs at least {x.rank} counts, got {reps}")
    sizes = [1] * (len(reps) - x.rank) + list(_shape(x))
    if any(r == 0 for r in reps):
        raise Unsupported("repeat by 0 gives an empty tensor; no IR form")
    split = [v for s in sizes for v in (1, s)]
    tiled = broadcast_to(reshape(x, split), [v for r, s in zip(reps, sizes) for v in (r, s)])
    return reshape(tiled, [r * s for r, s in zip(reps, sizes)])


def _upsample_nearest(spatial: int) -> Handler:
    """Nearest upsampling by whole factors: every element broadcast over a block, read merged;
    by a fractional factor (or to any size), a gather per axis (`aten_lookups.nearest_axis`)."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        x = a[0]
        size, scales = _get(a, k, 1, "output_size"), _get(a, k, 2, "scale_factors")
        lead, sizes = _shape(x)[:-spatial], _shape(x)[-spatial:]
        if size is not None:
            out = [int(s) for s in size]
            factors = [o // s for o, s in zip(out, sizes)]
            exact = all(o == s * f for o, s, f in zip(out, sizes, factors))
        else:
            scales = list(scales) if isinstance(scales, (list, tuple)) else [scales] * spatial
            factors = [int(s) for s in scales]
            exact = all(float(s) == f for s, f in zip(scales, factors))
        if not exact or min(factors) < 1:      # fractional: one gather per axis at PyTorch's indices
            steps = [None] * spatial if size is not None else [float(f) for f in scales]
            targets = out if size is not None else [int(s * f) for s, f in zip(sizes, steps)]
            y = x
            for axis, size_in, size_out, scale in zip(range(len(lead), x.rank), sizes, targets, steps):
                if size_out != size_in or scale is not None:
                    y = nearest_axis(y, axis, size_out, scale)
            return y
        split = list(lead) + [v for s in sizes for v in (s, 1)]
        spread = list(lead) + [v for s, f in zip(sizes, factors) for v in (s, f)]
        blocks = broadcast_to(reshape(x, split), spread)
        return reshape(blocks, list(lead) + [s * f for s, f in zip(sizes, factors)])

    return handler


def _pixel_shuffle(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, r = a[0], int(_get(a, k, 1, "upscale_factor"))
    *lead, c, h, w = _shape(x)
    if c % (r * r):
        raise Unsupported(f"pixel_shuffle needs channels ({c}) divisible by {r * r}")
    n = len(lead)
    split = reshape(x, (*lead, c // (r * r), r, r, h, w))
    dims = tuple(range(n + 1)) + (n + 3, n + 1, n + 4, n + 2)
    return reshape(make("permute", [split], dims=dims), (*lead, c // (r * r), h * r, w * r))


def _pixel_unshuffle(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, r = a[0], int(_get(a, k, 1, "downscale_factor"))
    *lead, c, h, w = _shape(x)
    if h % r or w % r:
        raise Unsupported(f"pixel_unshuffle needs height and width divisible by {r}")
    n = len(lead)
    split = reshape(x, (*lead, c, h // r, r, w // r, r))
    dims = tuple(range(n + 1)) + (n + 2, n + 4, n + 1, n + 3)
    return reshape(make("permute", [split], dims=dims), (*lead, c * r * r, h // r, w // r))


def _dtype(v: Any, like: Node | None) -> DType:
    if v is None:
        if like is None:
            return DTYPES["f32"]
        return like.dtype
    name = str(v).removeprefix("torch.")
    found = next((d for d in DTYPES.values() if d.torch == name), None)
    if found is None:
        raise Unsupported(f"no IR dtype for {v}")
    return found


def _full_like(value: float | None) -> Handler:
    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        fill = _get(a, k, 1, "fill_value") if value is None else value
        return full(_shape(a[0]), fill, _dtype(k.get("dtype"), a[0]))

    return handler


def _full(value: float | None) -> Handler:
    """zeros/ones/full(size, fill): the dtype is dtype=, else the fill's kind (full(.., 2) is
    int64, as torch), else float32."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        fill = _get(a, k, 1, "fill_value") if value is None else value
        if k.get("dtype") is not None:
            dtype = _dtype(k["dtype"], None)
        elif isinstance(fill, bool):
            dtype = DTYPES["bool"]
        elif isinstance(fill, int) and value is None:
            dtype = DTYPES["i64"]
        else:
            dtype = DTYPES["f32"]
        return full([int(s) for s in a[0]], fill, dtype)

    return handler


def _diag(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """diag of a matrix (its offset diagonal) or of a vector (the matrix holding it on the main
    diagonal): the intent language's own."""
    return composites.diag(a[0], int(_get(a, k, 1, "diagonal", 0)))


def _roll(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """roll along each dim: the last `shift` elements, then the rest (two slices concatenated);
    without dims, the flattened tensor rolled and read back."""
    x, shifts, dims = a[0], _get(a, k, 1, "shifts"), _get(a, k, 2, "dims", ())
    shifts = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    if not dims:
        flat = reshape(x, (math.prod(_shape(x)),))
        return reshape(_roll([flat, shifts, [0]], {}), _shape(x))
    if len(shifts) != len(dims):
        raise Unsupported(f"roll needs one shift per dim, got shifts {shifts} and dims {dims}")
    for shift, dim in zip(shifts, dims):
        dim = normalize_dim(int(dim), x.rank)
        n = _shape(x)[dim]
        s = int(shift) % n
        if s:
            x = concatenate([_slice_of(x, dim, n - s, None), _slice_of(x, dim, 0, n - s)], dim)
    return x


def _tile(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, reps = a[0], [int(r) for r in _get(a, k, 1, "dims")]
    return _repeat([x, [1] * (x.rank - len(reps)) + reps], {})


def _movedim(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, src, dst = a[0], _get(a, k, 1, "source"), _get(a, k, 2, "destination")
    src = [src] if isinstance(src, int) else list(src)
    dst = [dst] if isinstance(dst, int) else list(dst)
    src = [normalize_dim(int(d), x.rank) for d in src]
    dst = [normalize_dim(int(d), x.rank) for d in dst]
    order: list[int | None] = [None] * x.rank
    for s_, d_ in zip(src, dst):
        order[d_] = s_
    rest = iter(d for d in range(x.rank) if d not in src)
    dims = tuple(d if d is not None else next(rest) for d in order)
    return x if dims == tuple(range(x.rank)) else make("permute", [x], dims=dims)


def _rot90(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, turns, dims = a[0], int(_get(a, k, 1, "k", 1)) % 4, _get(a, k, 2, "dims", [0, 1])
    d0, d1 = (normalize_dim(int(d), x.rank) for d in dims)
    swap = list(range(x.rank))
    swap[d0], swap[d1] = d1, d0
    if turns == 1:
        return make("permute", [make("flip", [x], dims=(d1,))], dims=tuple(swap))
    if turns == 2:
        return make("flip", [x], dims=(d0, d1))
    if turns == 3:
        return make("flip", [make("permute", [x], dims=tuple(swap))], dims=(d1,))
    return x


def _trace(a: Sequence[Any], k: dict[str, Any]) -> Node:
    return make("sum", [_diag([a[0]], {})])


def _new_full(value: float | None) -> Handler:
    """x.new_zeros/new_ones/new_full(size): x's dtype unless dtype= says otherwise."""

    def handler(a: Sequence[Any], k: dict[str, Any]) -> Node:
        fill = _get(a, k, 2, "fill_value") if value is None else value
        return full([int(s) for s in a[1]], fill, _dtype(k.get("dtype"), a[0]))

    return handler


def _masked_fill(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, mask, value = a[0], a[1], _scalar(a[2])
    out = make("where", [mask, value, x])
    return out if out.dtype == x.dtype else make("cast", [out], dtype=x.dtype)


def _glu(a: Sequence[Any], k: dict[str, Any]) -> Node:
    x, dim = a[0], normalize_dim(int(_get(a, k, 1, "dim", -1)), a[0].rank)
    half = _shape(x)[dim] // 2
    if _shape(x)[dim] % 2:
        raise Unsupported(f"glu needs an even size along dim {dim}, got {_shape(x)[dim]}")
    return make("mul", [_slice_of(x, dim, 0, half), make("sigmoid", [_slice_of(x, dim, half, None)])])


def _prelu(a: Sequence[Any], k: dict[str, Any]) -> Node:
    """prelu(x, weight): one slope, or one per channel (dim 1)."""
    x, w = a[0], a[1]
    count = math.prod(_shape(w))
    if count != 1:
        if x.rank < 2 or _shape(x)[1] != count:
            raise Unsupported(f"prelu with {count} slopes needs {count} channels in dim 1")
        w = reshape(w, (count,) + (1,) * (x.rank - 2))
    else:
        w = reshape(w, ())
    return make("where", [make("gt", [x, const(0.0)]), x, make("mul", [w, x])])


SLICING: dict[str, Handler] = {
    "aten.slice": _slice,
    "aten.narrow": _narrow,
    "aten.select": _select,
    "aten.split": _split,
    "aten.split_with_sizes": _split_with_sizes,
    "aten.chunk": _chunk,
    "aten.unbind": _unbind,
    "aten.cat": _cat,
    "aten.concat": _cat,
    "aten.concatenate": _cat,
    "aten.stack": _stack,
    "aten.constant_pad_nd": _constant_pad,
    "aten.pad": _pad,
    **{f"aten.reflection_pad{d}d": _mode_pad("reflect") for d in (1, 2, 3)},
    **{f"aten.replication_pad{d}d": _mode_pad("replicate") for d in (1, 2, 3)},
    "aten.expand": _expand,
    "aten.expand_as": lambda a, k: broadcast_to(a[0], _shape(a[1])),
    "aten.broadcast_to": _expand,
    "aten.repeat": _repeat,
    "aten.upsample_nearest1d": _upsample_nearest(1),
    "aten.upsample_nearest2d": _upsample_nearest(2),
    "aten.upsample_nearest3d": _upsample_nearest(3),
    "aten.pixel_shuffle": _pixel_shuffle,
    "aten.pixel_unshuffle": _pixel_unshuffle,
    "aten.zeros_like": _full_like(0),
    "aten.ones_like": _full_like(1),
    "aten.full_like": _full_like(None),
    "aten.zeros": _full(0.0),
    "aten.ones": _full(1.0),
    "aten.full": _full(None),
    "aten.masked_fill": _masked_fill,
    "aten.diag": _diag,
    "aten.trace": _trace,
    "aten.roll": _roll,
    "aten.tile": _tile,
    "aten.movedim": _movedim,
    "aten.moveaxis": _movedim,
    "aten.rot90": _rot90,
    "aten.new_zeros": _new_full(0),
    "aten.new_ones": _new_full(1),
    "aten.new_full": _new_full(None),
    "aten.glu": _glu,
    "aten.prelu": _prelu,
}
