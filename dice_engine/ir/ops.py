"""Operator registry: builds `Node`s with PyTorch's shape and dtype rules.

`make(op, args, **attrs)` is the only way nodes are built (parser, tests, sketches), so shape
checking lives in one place. Errors are `OpError`s that name the offending argument, which the
intent parser turns into a character range.
"""
from __future__ import annotations

from typing import Any, Sequence

from .dtypes import BOOL, F32, I64, DType, promote, promote_with_scalar
from .graph import Dim, Node, Shape


class OpError(ValueError):
    """A shape/dtype/argument problem. `arg` is the index of the blamed argument (or None)."""

    def __init__(self, message: str, arg: int | None = None, attr: str | None = None):
        super().__init__(message)
        self.arg = arg
        self.attr = attr


UNARY_FLOAT = {"exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "gelu", "silu"}
UNARY_SAME = {"neg", "abs", "relu", "leaky_relu", "clamp"}
UNARY = UNARY_FLOAT | UNARY_SAME | {"cast", "logical_not"}
ARITH = {"add", "sub", "mul", "div", "pow", "maximum", "minimum"}
COMPARE = {"lt", "le", "gt", "ge", "eq", "ne"}
LOGICAL = {"logical_and", "logical_or"}
BINARY = ARITH | COMPARE | LOGICAL
ELEMENTWISE = UNARY | BINARY | {"where"}
REDUCTIONS = {"sum", "mean", "max", "min", "prod", "argmax", "argmin"}
HEAVY = REDUCTIONS | {"softmax", "log_softmax", "layer_norm", "rms_norm", "cumsum", "permute",
                      "matmul", "conv2d", "max_pool2d", "avg_pool2d", "torch"}
OPS = ELEMENTWISE | HEAVY


def is_elementwise(node: Node) -> bool:
    return node.op in ELEMENTWISE or node.op in ("input", "const")


def const(value: float | int | bool) -> Node:
    """A Python scalar. Its dtype is 'weak' (see `_binary_dtype`)."""
    dtype = BOOL if isinstance(value, bool) else (I64 if isinstance(value, int) else F32)
    return Node("const", (), dtype, (), value=value)


def torch_call(text: str, names: Sequence[str], args: Sequence[Node],
               symbols: dict[str, int | None] | None = None) -> Node:
    """Any PyTorch expression over `args` (bound to `names` in `text`); PyTorch gives its dtype
    and shape (ir/torch_expr.py). Raises OpError when PyTorch refuses it or a size is unbound."""
    from . import torch_expr

    inputs = {}
    for name, node in zip(names, args):
        shape = tuple(d if isinstance(d, int) else (symbols or {}).get(d) for d in node.shape)
        if any(d is None for d in shape):
            raise OpError(f"'{name}' has a symbolic size; a torch expression needs concrete sizes "
                          "(give the symbol a value, e.g. N=4096)")
        inputs[name] = (node.dtype, tuple(int(d) for d in shape))
    try:
        dtype, shape = torch_expr.infer(text, inputs)
    except torch_expr.TorchExprError as e:
        raise OpError(str(e)) from None
    return Node("torch", tuple(args), dtype, shape, attrs=(("expr", text), ("names", tuple(names))))


def input_tensor(name: str, dtype: DType, shape: Shape) -> Node:
    return Node("input", (), dtype, tuple(shape), name=name)


def broadcast_shapes(a: Shape, b: Shape) -> Shape | None:
    """PyTorch broadcasting; symbols match only themselves. None when incompatible."""
    out: list[Dim] = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        else:
            return None
    return tuple(reversed(out))


def _is_scalar(n: Node) -> bool:
    return n.op == "const"


def _binary_dtype(a: Node, b: Node) -> DType:
    if _is_scalar(a) and not _is_scalar(b):
        return promote_with_scalar(b.dtype, a.dtype.is_float)
    if _is_scalar(b) and not _is_scalar(a):
        return promote_with_scalar(a.dtype, b.dtype.is_float)
    return promote(a.dtype, b.dtype)


def normalize_dim(dim: int, rank: int, arg: int = 0, attr: str = "dim") -> int:
    if rank == 0 and dim in (0, -1):
        return 0
    if not -rank <= dim < rank:
        raise OpError(f"dim {dim} is out of range for a tensor of rank {rank} "
                      f"(expected {-rank}..{rank - 1})", arg, attr)
    return dim % rank


def _pair(v: Any, attr: str) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, int) for x in v):
        return (int(v[0]), int(v[1]))
    raise OpError(f"{attr} must be an int or a pair of ints, got {v!r}", None, attr)


def _out_extent(size: Dim, k: int, s: int, p: int, d: int) -> Dim:
    if isinstance(size, str):
        raise OpError("convolution and pooling need concrete spatial sizes, not symbols", 0)
    out = (size + 2 * p - d * (k - 1) - 1) // s + 1
    if out <= 0:
        raise OpError(f"the window does not fit: input extent {size}, kernel {k}, padding {p}", 0)
    return out


def make(op: str, args: Sequence[Node], **attrs: Any) -> Node:
    """Build a node for `op`, checking arity, shapes and attributes."""
    if op not in OPS:
        raise OpError(f"unknown operator '{op}'")
    args = tuple(args)
    builder = _BUILDERS.get(op)
    if builder is None:
        if op in UNARY:
            builder = _unary
        elif op in BINARY:
            builder = _binary
        else:
            builder = _reduction
    return builder(op, args, dict(attrs))


def _node(op: str, args: tuple[Node, ...], dtype: DType, shape: Shape, attrs: dict[str, Any]) -> Node:
    return Node(op, args, dtype, tuple(shape), tuple(sorted(attrs.items())))


def _arity(op: str, args: tuple[Node, ...], lo: int, hi: int | None = None) -> None:
    hi = lo if hi is None else hi
    if not lo <= len(args) <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        raise OpError(f"{op} takes {want} tensor argument(s), got {len(args)}")


def _unary(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 1)
    (x,) = args
    if op == "cast":
        dtype = attrs["dtype"]
    elif op == "logical_not":
        dtype = BOOL
    elif op in UNARY_FLOAT:
        dtype = x.dtype if x.dtype.is_float else F32
    else:
        dtype = x.dtype
    if op == "gelu":
        attrs.setdefault("approximate", "none")
        if attrs["approximate"] not in ("none", "tanh"):
            raise OpError("gelu's approximate must be 'none' or 'tanh'", None, "approximate")
    if op == "leaky_relu":
        attrs.setdefault("negative_slope", 0.01)
    if op == "clamp" and attrs.get("min") is None and attrs.get("max") is None:
        raise OpError("clamp needs min= or max=")
    return _node(op, args, dtype, x.shape, attrs)


def _binary(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 2)
    a, b = args
    shape = broadcast_shapes(a.shape, b.shape)
    if shape is None:
        raise OpError(f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast for '{op}'", 1)
    if op in COMPARE or op in LOGICAL:
        dtype = BOOL
    else:
        dtype = _binary_dtype(a, b)
        if op == "div" and not dtype.is_float:
            dtype = F32   # true division, as torch.div
    return _node(op, args, dtype, shape, attrs)


def _where(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 3)
    c, a, b = args
    shape = broadcast_shapes(c.shape, a.shape)
    shape = None if shape is None else broadcast_shapes(shape, b.shape)
    if shape is None:
        raise OpError("where's condition and values do not broadcast", 2)
    return _node(op, args, _binary_dtype(a, b), shape, attrs)


def _reduce_dims(x: Node, dim: Any) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(x.rank))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    out = tuple(sorted({normalize_dim(int(d), x.rank) for d in dims}))
    return out


def _reduction(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 1)
    (x,) = args
    if op in ("argmax", "argmin") and isinstance(attrs.get("dim"), (tuple, list)):
        raise OpError(f"{op} takes a single dim", None, "dim")
    dims = _reduce_dims(x, attrs.get("dim"))
    keepdim = bool(attrs.get("keepdim", False))
    shape = tuple((1 if i in dims else d) for i, d in enumerate(x.shape) if keepdim or i not in dims)
    if op in ("argmax", "argmin"):
        dtype = I64
    elif op in ("sum", "prod") and not x.dtype.is_float:
        dtype = I64
    elif op == "mean":
        if not x.dtype.is_float:
            raise OpError("mean needs a floating tensor (cast it first)", 0)
        dtype = x.dtype
    else:
        dtype = x.dtype
    return _node(op, args, dtype, shape, {"dim": dims, "keepdim": keepdim})


def _softmax(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 1)
    (x,) = args
    if "dim" not in attrs or attrs["dim"] is None:
        raise OpError(f"{op} needs dim=", None, "dim")
    dim = normalize_dim(int(attrs["dim"]), x.rank)
    dtype = x.dtype if x.dtype.is_float else F32
    return _node(op, args, dtype, x.shape, {"dim": dim})


def _norm(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    hi = 3 if op == "layer_norm" else 2
    _arity(op, args, 1, hi)
    x = args[0]
    if x.rank == 0:
        raise OpError(f"{op} needs a tensor of rank >= 1", 0)
    if not x.dtype.is_float:
        raise OpError(f"{op} needs a floating tensor", 0)
    normalized = attrs.pop("normalized_shape", None)
    inner = (x.shape[-1],) if normalized is None else tuple(normalized)
    if len(inner) != 1:
        raise OpError(f"{op} over more than the last dimension is not supported", None, "normalized_shape")
    if inner[0] != x.shape[-1]:
        raise OpError(f"normalized_shape {list(inner)} does not match the last dimension {x.shape[-1]}",
                      None, "normalized_shape")
    for i, p in enumerate(args[1:], start=1):
        if p.shape != inner:
            raise OpError(f"{op}'s parameter must have shape {list(inner)}, got {list(p.shape)}", i)
    eps = attrs.get("eps")
    if eps is None and op == "layer_norm":
        eps = 1e-5
    return _node(op, args, x.dtype, x.shape, {"eps": eps})   # rms_norm eps None: finfo(dtype).eps


def _cumsum(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 1)
    (x,) = args
    if "dim" not in attrs:
        raise OpError("cumsum needs dim=", None, "dim")
    dim = normalize_dim(int(attrs["dim"]), x.rank)
    dtype = x.dtype if x.dtype.is_float else I64
    return _node(op, args, dtype, x.shape, {"dim": dim})


def _permute(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 1)
    (x,) = args
    dims = tuple(normalize_dim(int(d), x.rank, 0, "dims") for d in attrs["dims"])
    if sorted(dims) != list(range(x.rank)):
        raise OpError(f"dims {list(attrs['dims'])} are not a permutation of the {x.rank} dimensions",
                      None, "dims")
    return _node(op, args, x.dtype, tuple(x.shape[d] for d in dims), {"dims": dims})


def transpose(x: Node, a: int, b: int) -> Node:
    """`transpose(x, a, b)` / `x.T` as a permute."""
    if x.rank < 2 and (a, b) in ((0, 1), (1, 0), (-2, -1), (-1, -2)):
        return x     # .T of a vector is the vector
    a, b = normalize_dim(a, x.rank), normalize_dim(b, x.rank)
    dims = list(range(x.rank))
    dims[a], dims[b] = dims[b], dims[a]
    return make("permute", [x], dims=tuple(dims))


def _matmul(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 2)
    a, b = args
    if a.rank not in (2, 3) or b.rank not in (2, 3):
        raise OpError(f"@ supports 2-D and 3-D operands, got ranks {a.rank} and {b.rank}",
                      0 if a.rank not in (2, 3) else 1)
    if a.shape[-1] != b.shape[-2]:
        raise OpError(f"inner dimensions differ: {list(a.shape)} @ {list(b.shape)} "
                      f"({a.shape[-1]} vs {b.shape[-2]})", 1)
    if a.rank == 3 and b.rank == 3 and a.shape[0] != b.shape[0] and 1 not in (a.shape[0], b.shape[0]):
        raise OpError(f"batch sizes differ: {a.shape[0]} vs {b.shape[0]}", 1)
    batch: Shape = ()
    if a.rank == 3 or b.rank == 3:
        batch = (a.shape[0] if a.rank == 3 and a.shape[0] != 1 else b.shape[0],)
    if not (a.dtype.is_float and b.dtype.is_float):
        raise OpError("@ needs floating operands", 0 if not a.dtype.is_float else 1)
    if a.dtype != b.dtype:
        raise OpError(f"@ operands must have one dtype, got {a.dtype} and {b.dtype}", 1)
    return _node(op, args, a.dtype, batch + (a.shape[-2], b.shape[-1]), attrs)


def _conv2d(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 2, 3)
    x, w = args[0], args[1]
    if x.rank != 4:
        raise OpError(f"conv2d input must be NCHW (rank 4), got rank {x.rank}", 0)
    if w.rank != 4:
        raise OpError(f"conv2d weight must be [K, C, R, S], got rank {w.rank}", 1)
    if int(attrs.get("groups", 1)) != 1:
        raise OpError("grouped convolution is not supported", None, "groups")
    if w.shape[1] != x.shape[1]:
        raise OpError(f"weight has {w.shape[1]} input channels, input has {x.shape[1]}", 1)
    if len(args) == 3 and args[2].shape != (w.shape[0],):
        raise OpError(f"bias must have shape [{w.shape[0]}]", 2)
    if x.dtype != w.dtype or not x.dtype.is_float:
        raise OpError("conv2d needs floating input and weight of one dtype", 1)
    stride, padding, dilation = (_pair(attrs.get(k, d), k) for k, d in
                                 (("stride", 1), ("padding", 0), ("dilation", 1)))
    r, s = w.shape[2], w.shape[3]
    if not isinstance(r, int) or not isinstance(s, int):
        raise OpError("conv2d kernel extents must be concrete", 1)
    oh = _out_extent(x.shape[2], r, stride[0], padding[0], dilation[0])
    ow = _out_extent(x.shape[3], s, stride[1], padding[1], dilation[1])
    return _node(op, args, x.dtype, (x.shape[0], w.shape[0], oh, ow),
                 {"stride": stride, "padding": padding, "dilation": dilation})


def _pool(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 1)
    (x,) = args
    if x.rank != 4:
        raise OpError(f"{op} needs an NCHW tensor (rank 4), got rank {x.rank}", 0)
    if "kernel_size" not in attrs:
        raise OpError(f"{op} needs kernel_size=", None, "kernel_size")
    k = _pair(attrs["kernel_size"], "kernel_size")
    s = _pair(attrs.get("stride") or k, "stride")
    p = _pair(attrs.get("padding", 0), "padding")
    if p[0] * 2 > k[0] or p[1] * 2 > k[1]:
        raise OpError("padding must be at most half the kernel size", None, "padding")
    oh = _out_extent(x.shape[2], k[0], s[0], p[0], 1)
    ow = _out_extent(x.shape[3], k[1], s[1], p[1], 1)
    return _node(op, args, x.dtype, (x.shape[0], x.shape[1], oh, ow),
                 {"kernel_size": k, "stride": s, "padding": p})


_BUILDERS = {
    "where": _where,
    "softmax": _softmax, "log_softmax": _softmax,
    "layer_norm": _norm, "rms_norm": _norm,
    "cumsum": _cumsum,
    "permute": _permute,
    "matmul": _matmul,
    "conv2d": _conv2d,
    "max_pool2d": _pool, "avg_pool2d": _pool,
}
