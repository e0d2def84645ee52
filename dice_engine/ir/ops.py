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


UNARY_FLOAT = {"exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "gelu", "silu", "erf", "sin", "cos"}
# rounding keeps the dtype (an integer is its own floor); round is half to even, as torch
ROUNDING = {"floor", "ceil", "round", "trunc"}
UNARY_SAME = {"neg", "abs", "relu", "leaky_relu", "clamp"} | ROUNDING
UNARY = UNARY_FLOAT | UNARY_SAME | {"cast", "logical_not"}
ARITH = {"add", "sub", "mul", "div", "pow", "maximum", "minimum"}
COMPARE = {"lt", "le", "gt", "ge", "eq", "ne"}
LOGICAL = {"logical_and", "logical_or"}
BINARY = ARITH | COMPARE | LOGICAL
ELEMENTWISE = UNARY | BINARY | {"where"}
REDUCTIONS = {"sum", "mean", "max", "min", "prod", "argmax", "argmin"}
CONVS = {f"conv{d}d" for d in (1, 2, 3)} | {f"conv_transpose{d}d" for d in (1, 2, 3)}
POOLS = {f"{kind}_pool{d}d" for kind in ("max", "avg") for d in (1, 2, 3)}
SCANS = {"cumsum", "cumprod"}
# Mean and biased variance over `dim` in one pass: shape (2, *x's shape with `dim` kept as 1),
# [0] the mean, [1] the variance (what batch, instance and group norm normalize with).
STATISTICS = {"moments"}
# Views: each output element is one element of the argument (or of an index), re-addressed;
# a pad's border elements are its constant instead, and a gather's address along its dim is read
# from its index tensor.
VIEWS = {"reshape", "flip", "index", "slice", "pad", "gather"}
HEAVY = REDUCTIONS | STATISTICS | SCANS | CONVS | POOLS | {"softmax", "log_softmax", "layer_norm", "rms_norm",
                                              "permute", "matmul", "torch"}
OPS = ELEMENTWISE | HEAVY | VIEWS


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


def _ntuple(v: Any, n: int, attr: str, low: int = 0) -> tuple[int, ...]:
    """An int or a sequence of `n` ints (each >= `low`), as PyTorch's _single/_pair/_triple."""
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v,) * n
    if (isinstance(v, (tuple, list)) and len(v) == n
            and all(isinstance(x, int) and not isinstance(x, bool) for x in v)):
        if any(x < low for x in v):
            raise OpError(f"{attr} must be >= {low}, got {list(v)}", None, attr)
        return tuple(int(x) for x in v)
    what = "an int" if n == 1 else f"an int or {n} ints"
    raise OpError(f"{attr} must be {what}, got {v!r}", None, attr)


def pair(v: Any, attr: str) -> tuple[int, int]:
    a, b = _ntuple(v, 2, attr)
    return (a, b)


def _out_extent(size: Dim, k: int, s: int, p: int, d: int, ceil_mode: bool = False) -> Dim:
    """PyTorch's output extent of a sliding window (convolution, pooling)."""
    if isinstance(size, str):
        raise OpError("convolution and pooling need concrete spatial sizes, not symbols", 0)
    span = d * (k - 1) + 1
    if size + 2 * p < span:
        raise OpError(f"the window does not fit: input extent {size} padded by {p} on each side is "
                      f"{size + 2 * p}, the kernel spans {span}", 0)
    out = -(-(size + 2 * p - span) // s) + 1 if ceil_mode else (size + 2 * p - span) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:   # the last window must start inside input or left pad
        out -= 1
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


def _moments(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 1)
    (x,) = args
    if not x.dtype.is_float:
        raise OpError("moments needs a floating tensor (cast it first)", 0)
    dims = _reduce_dims(x, attrs.get("dim"))
    shape = (2,) + tuple(1 if i in dims else d for i, d in enumerate(x.shape))
    return _node(op, args, x.dtype, shape, {"dim": dims})


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
    if not 1 <= len(inner) <= x.rank or tuple(x.shape[x.rank - len(inner):]) != inner:
        raise OpError(f"normalized_shape {list(inner)} does not match the trailing dimensions of the "
                      f"input's shape {list(x.shape)}", None, "normalized_shape")
    for i, p in enumerate(args[1:], start=1):
        if p.shape != inner:
            raise OpError(f"{op}'s parameter must have shape {list(inner)}, got {list(p.shape)}", i)
    eps = attrs.get("eps")
    if eps is None and op == "layer_norm":
        eps = 1e-5
    # rms_norm eps None: finfo(dtype).eps
    axes = {"axes": len(inner)} if len(inner) > 1 else {}     # normalised trailing dims (default 1)
    return _node(op, args, x.dtype, x.shape, {"eps": eps, **axes})


def _cumsum(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 1)
    (x,) = args
    if "dim" not in attrs:
        raise OpError(f"{op} needs dim=", None, "dim")
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
    if a.rank < 2 or b.rank < 2:
        raise OpError(f"@ needs operands of rank >= 2, got ranks {a.rank} and {b.rank} "
                      "(write a vector as a [K, 1] matrix)", 0 if a.rank < 2 else 1)
    if a.shape[-1] != b.shape[-2]:
        raise OpError(f"inner dimensions differ: {list(a.shape)} @ {list(b.shape)} "
                      f"({a.shape[-1]} vs {b.shape[-2]})", 1)
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if batch is None:
        raise OpError(f"batch dimensions {list(a.shape[:-2])} and {list(b.shape[:-2])} do not broadcast", 1)
    if not (a.dtype.is_float and b.dtype.is_float):
        raise OpError("@ needs floating operands", 0 if not a.dtype.is_float else 1)
    if a.dtype != b.dtype:
        raise OpError(f"@ operands must have one dtype, got {a.dtype} and {b.dtype}", 1)
    return _node(op, args, a.dtype, batch + (a.shape[-2], b.shape[-1]), attrs)


def spatial_rank(op: str) -> int:
    """The number of spatial dimensions of a convolution or pooling operator ("conv3d" → 3)."""
    return int(op[op.index("d") - 1]) if op.endswith("d") and op[-2].isdigit() else 2


def _conv(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    """conv{1,2,3}d and conv_transpose{1,2,3}d with PyTorch's arguments and shape rules."""
    _arity(op, args, 2, 3)
    x, w = args[0], args[1]
    d = spatial_rank(op)
    transposed = op.startswith("conv_transpose")
    layout = "NC" + "DHW"[3 - d:]
    if x.rank != d + 2:
        raise OpError(f"{op} input must be {layout} (rank {d + 2}), got rank {x.rank}", 0)
    if w.rank != d + 2:
        want = "[C_in, C_out/groups, ...kernel]" if transposed else "[C_out, C_in/groups, ...kernel]"
        raise OpError(f"{op} weight must be {want} (rank {d + 2}), got rank {w.rank}", 1)
    if x.dtype != w.dtype or not x.dtype.is_float:
        raise OpError(f"{op} needs floating input and weight of one dtype", 1)
    groups = attrs.get("groups", 1)
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise OpError(f"groups must be a positive integer, got {groups!r}", None, "groups")
    channels = x.shape[1]
    if not isinstance(channels, int) or any(not isinstance(k, int) for k in w.shape):
        raise OpError(f"{op} needs concrete channel counts and kernel extents", 1)
    if channels % groups:
        raise OpError(f"groups={groups} does not divide the {channels} input channels", None, "groups")
    if transposed:
        if w.shape[0] != channels:
            raise OpError(f"weight has {w.shape[0]} input channels (dim 0), input has {channels}", 1)
        out_channels = w.shape[1] * groups
    else:
        if w.shape[0] % groups:
            raise OpError(f"groups={groups} does not divide the {w.shape[0]} output channels", None, "groups")
        if w.shape[1] * groups != channels:
            raise OpError(f"weight has {w.shape[1]} input channels per group, input has {channels} "
                          f"channels in {groups} group(s) (expected {channels // groups})", 1)
        out_channels = w.shape[0]
    if len(args) == 3 and args[2].shape != (out_channels,):
        raise OpError(f"bias must have shape [{out_channels}], got {list(args[2].shape)}", 2)
    stride = _ntuple(attrs.get("stride", 1), d, "stride", 1)
    padding = _ntuple(attrs.get("padding", 0), d, "padding", 0)
    dilation = _ntuple(attrs.get("dilation", 1), d, "dilation", 1)
    kernel = tuple(int(k) for k in w.shape[2:])
    extents: list[Dim] = []
    if transposed:
        output_padding = _ntuple(attrs.get("output_padding", 0), d, "output_padding", 0)
        for i in range(d):
            if output_padding[i] >= max(stride[i], dilation[i]):
                raise OpError(f"output_padding {output_padding[i]} must be smaller than stride or dilation "
                              f"(max {max(stride[i], dilation[i]) - 1})", None, "output_padding")
            size = x.shape[2 + i]
            if isinstance(size, str):
                raise OpError("convolution and pooling need concrete spatial sizes, not symbols", 0)
            out = ((size - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1)
                   + output_padding[i] + 1)
            if out <= 0:
                raise OpError(f"the output extent {out} of dimension {i} is not positive "
                              f"(input {size}, padding {padding[i]})", None, "padding")
            extents.append(out)
        extra: dict[str, Any] = {"output_padding": output_padding}
    else:
        extents = [_out_extent(x.shape[2 + i], kernel[i], stride[i], padding[i], dilation[i])
                   for i in range(d)]
        extra = {}
    if groups != 1:     # stored only when not the default, as the attributes print in the IR
        extra["groups"] = groups
    return _node(op, args, x.dtype, (x.shape[0], out_channels, *extents),
                 {"stride": stride, "padding": padding, "dilation": dilation, **extra})


def _pool(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    """{max,avg}_pool{1,2,3}d: the last 1-3 dimensions are pooled (batch and channel dims lead)."""
    _arity(op, args, 1)
    (x,) = args
    d = spatial_rank(op)
    if x.rank not in (d + 1, d + 2):
        raise OpError(f"{op} needs a tensor of rank {d + 1} or {d + 2}, got rank {x.rank}", 0)
    if not x.dtype.is_float and op.startswith("avg"):
        raise OpError(f"{op} needs a floating tensor (as torch)", 0)
    if "kernel_size" not in attrs:
        raise OpError(f"{op} needs kernel_size=", None, "kernel_size")
    k = _ntuple(attrs["kernel_size"], d, "kernel_size", 1)
    s = _ntuple(attrs.get("stride") or k, d, "stride", 1)
    p = _ntuple(attrs.get("padding", 0), d, "padding", 0)
    is_max = op.startswith("max")
    dil = _ntuple(attrs.get("dilation", 1), d, "dilation", 1)
    if not is_max and dil != (1,) * d:
        raise OpError(f"{op} has no dilation", None, "dilation")
    for i in range(d):
        if p[i] * 2 > k[i]:
            raise OpError(f"padding {p[i]} must be at most half the kernel size {k[i]} "
                          f"(0..{k[i] // 2})", None, "padding")
    ceil_mode = bool(attrs.get("ceil_mode", False))
    lead = x.shape[:x.rank - d]
    extents = [_out_extent(x.shape[x.rank - d + i], k[i], s[i], p[i], dil[i], ceil_mode) for i in range(d)]
    # non-default options only, as the attributes print in the IR
    out_attrs: dict[str, Any] = {"kernel_size": k, "stride": s, "padding": p}
    if ceil_mode:
        out_attrs["ceil_mode"] = True
    if dil != (1,) * d:
        out_attrs["dilation"] = dil
    if not is_max and not attrs.get("count_include_pad", True):
        out_attrs["count_include_pad"] = False
    return _node(op, args, x.dtype, (*lead, *extents), out_attrs)


def _reshape(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 1)
    (x,) = args
    want = list(attrs.get("shape", ()))
    if any(isinstance(v, str) for v in list(x.shape) + want):
        if tuple(want) != x.shape:
            raise OpError("reshape needs concrete sizes (symbols only where the shape is unchanged)",
                          None, "shape")
        return _node(op, args, x.dtype, x.shape, {"shape": x.shape})
    numel = 1
    for v in x.shape:
        numel *= int(v)
    if want.count(-1) > 1:
        raise OpError("only one dimension of the new shape may be -1", None, "shape")
    known = 1
    for v in want:
        if v != -1:
            if not isinstance(v, int) or v < 0:
                raise OpError(f"the new shape {want} has an invalid size {v!r}", None, "shape")
            known *= v
    if -1 in want:
        if known == 0 or numel % known:
            raise OpError(f"shape {want} is invalid for an input of {numel} elements", None, "shape")
        want[want.index(-1)] = numel // known
    elif known != numel:
        raise OpError(f"shape {want} is invalid for an input of {numel} elements", None, "shape")
    return _node(op, args, x.dtype, tuple(want), {"shape": tuple(want)})


def _flip(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    _arity(op, args, 1)
    (x,) = args
    dims = attrs.get("dims")
    dims = dims if isinstance(dims, (tuple, list)) else (dims,)
    if not dims or dims == (None,):
        raise OpError("flip needs dims=", None, "dims")
    norm = tuple(sorted({normalize_dim(int(d), x.rank, 0, "dims") for d in dims}))
    return _node(op, args, x.dtype, x.shape, {"dims": norm})


def _concrete(x: Node, dim: int, what: str) -> int:
    size = x.shape[dim]
    if not isinstance(size, int):
        raise OpError(f"{what} needs a concrete size along dim {dim}, not the symbol {size}", 0)
    return size


def _slice(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    """x[start:end:step] along `dim` with Python's rules (negative bounds count from the end,
    bounds past either end are clipped). Stored as dim, start, step; the length is the shape's."""
    _arity(op, args, 1)
    (x,) = args
    dim = normalize_dim(int(attrs.get("dim", 0)), x.rank)
    size = _concrete(x, dim, "slice")
    step = int(attrs.get("step", 1))
    if step < 1:
        raise OpError(f"slice step must be positive, got {step}", None, "step")
    start, stop, _ = slice(attrs.get("start"), attrs.get("end"), step).indices(size)
    length = max(0, -(-(stop - start) // step))
    if length == 0:
        raise OpError(f"the slice [{start}:{stop}:{step}] of dim {dim} (size {size}) is empty", None, "start")
    shape = x.shape[:dim] + (length,) + x.shape[dim + 1:]
    return _node(op, args, x.dtype, shape, {"dim": dim, "start": start, "step": step})


def _gather(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    """torch.gather(x, dim, index): out[i] = x[i with i[dim] replaced by index[i]], the result of
    the index's shape; the index is an integer tensor of x's rank, no larger than x along the
    other dims. Indices are clamped to [0, size) along dim (torch raises there instead), so a
    kernel never reads outside x."""
    _arity(op, args, 2)
    x, idx = args
    dim = normalize_dim(int(attrs.get("dim", 0)), x.rank)
    _concrete(x, dim, "gather")
    if idx.dtype.is_float or idx.dtype.name == "bool":
        raise OpError(f"gather's index must be an integer tensor, got {idx.dtype}", 1)
    if idx.rank != x.rank:
        raise OpError(f"gather's index must have the input's rank ({x.rank}), got rank {idx.rank}", 1)
    for d, (n, m) in enumerate(zip(x.shape, idx.shape)):
        if d != dim and isinstance(n, int) and isinstance(m, int) and m > n:
            raise OpError(f"gather's index is larger than the input along dim {d} ({m} > {n})", 1)
    return _node(op, args, x.dtype, idx.shape, {"dim": dim})


PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad(op: str, args: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
    """Padding by `pads`, (before, after) element counts per dimension (>= 0): with `value`
    (mode constant), or the argument's elements mirrored without the edge (reflect, pads
    smaller than the size), its edge repeated (replicate) or wrapped around (circular, pads up
    to the size), as F.pad."""
    _arity(op, args, 1)
    (x,) = args
    pads = tuple(tuple(int(v) for v in pair) for pair in attrs.get("pads", ()))
    if len(pads) != x.rank or any(len(pair) != 2 or min(pair) < 0 for pair in pads):
        raise OpError(f"pad needs one (before, after) pair of counts >= 0 per dimension ({x.rank}), "
                      f"got {list(pads)}", None, "pads")
    mode = attrs.get("mode", "constant")
    if mode not in PAD_MODES:
        raise OpError(f"pad mode must be one of {', '.join(PAD_MODES)}, got {mode!r}", None, "mode")
    value = attrs.get("value", 0.0)
    if not isinstance(value, (int, float, bool)):
        raise OpError(f"pad value must be a number, got {value!r}", None, "value")
    shape = []
    for d, (lo, hi) in enumerate(pads):
        if lo == hi == 0:
            shape.append(x.shape[d])
            continue
        size = _concrete(x, d, "pad")
        if mode == "reflect" and max(lo, hi) >= size:
            raise OpError(f"reflect padding {max(lo, hi)} must be smaller than the size {size} of dim {d}",
                          None, "pads")
        if mode == "circular" and max(lo, hi) > size:
            raise OpError(f"circular padding {max(lo, hi)} must be at most the size {size} of dim {d}",
                          None, "pads")
        shape.append(size + lo + hi)
    extra = {"value": value} if mode == "constant" else {"mode": mode}
    return _node(op, args, x.dtype, tuple(shape), {"pads": pads, **extra})


def index(shape: Shape, dim: int) -> Node:
    """The i64 tensor of `shape` whose every element is its own index along `dim` (an arange
    broadcast over the other dimensions; triangular masks and one-hot selections use it)."""
    return Node("index", (), I64, tuple(shape), (("dim", normalize_dim(dim, len(shape))),))


_BUILDERS = {
    "where": _where,
    "softmax": _softmax, "log_softmax": _softmax,
    "layer_norm": _norm, "rms_norm": _norm,
    "cumsum": _cumsum, "cumprod": _cumsum,
    "moments": _moments,
    "permute": _permute,
    "matmul": _matmul,
    **{op: _conv for op in CONVS},
    **{op: _pool for op in POOLS},
    "reshape": _reshape,
    "flip": _flip,
    "slice": _slice,
    "pad": _pad,
    "gather": _gather,
}
