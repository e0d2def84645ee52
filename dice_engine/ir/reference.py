"""The reference evaluator: what an intent means, computed with numpy in float64.

It is the oracle that GPU verification compares against. Arithmetic runs in float64 (int64
for integer values) and the result is rounded once to the output dtype. bf16 values are held in
float32 arrays whose values are exactly representable in bf16; `to_storage`/`from_storage`
convert to and from the bytes a device buffer holds.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .dtypes import DType
from . import torch_expr
from .graph import Node, Program

Array = np.ndarray


# --- dtype storage -------------------------------------------------------------------------

def _round_to_bf16_bits(values: Array) -> Array:
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16          # round half to even
    nan = np.isnan(values)
    out = rounded.astype(np.uint16)
    out[nan] = 0x7FC0
    return out


def _bf16_bits_to_f32(bits: Array) -> Array:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def round_to(values: Array, dtype: DType) -> Array:
    """`values` rounded to `dtype` (bf16 kept in float32)."""
    if dtype.name == "bf16":
        return _bf16_bits_to_f32(_round_to_bf16_bits(np.asarray(values, dtype=np.float32)))
    if dtype.name == "bool":
        return np.asarray(values).astype(bool)
    if not dtype.is_float:
        return np.asarray(values).astype(dtype.numpy)
    return np.asarray(values).astype(dtype.numpy)


def to_storage(values: Array, dtype: DType) -> Array:
    """The exact element bytes a device buffer of `dtype` holds (bf16 → uint16 bits, bool → uint8)."""
    if dtype.name == "bf16":
        return _round_to_bf16_bits(np.asarray(values, dtype=np.float32))
    if dtype.name == "bool":
        return np.asarray(values).astype(np.uint8)
    return np.ascontiguousarray(np.asarray(values).astype(dtype.numpy))


def from_storage(raw: Array, dtype: DType) -> Array:
    if dtype.name == "bf16":
        return _bf16_bits_to_f32(np.asarray(raw).view(np.uint16))
    if dtype.name == "bool":
        return np.asarray(raw).view(np.uint8).astype(bool)
    return np.asarray(raw).view(dtype.numpy)


# --- math helpers ----------------------------------------------------------------------------

def _erf(x: Array) -> Array:
    try:
        from scipy.special import erf  # type: ignore[import-not-found]
        return erf(x)
    except ImportError:
        pass
    try:
        import torch
        return torch.special.erf(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))).numpy()
    except ImportError:
        return np.vectorize(math.erf, otypes=[np.float64])(x)


def _wide(x: Array) -> Array:
    """float64 for floats, int64 for integers, bool as is."""
    if x.dtype == bool:
        return x
    if np.issubdtype(x.dtype, np.integer):
        return x.astype(np.int64)
    return x.astype(np.float64)


def _as_float(x: Array) -> Array:
    return x.astype(np.float64)


def _gelu(x: Array, approximate: str) -> Array:
    x = _as_float(x)
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _sigmoid(x: Array) -> Array:
    x = _as_float(x)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _clamp(x: Array, node: Node) -> Array:
    lo, hi = node.attr("min"), node.attr("max")
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return x


UNARY: dict[str, Callable[[Array, Node], Array]] = {
    "neg": lambda x, n: -x,
    "exp": lambda x, n: np.exp(_as_float(x)),
    "log": lambda x, n: np.log(_as_float(x)),
    "sqrt": lambda x, n: np.sqrt(_as_float(x)),
    "rsqrt": lambda x, n: 1.0 / np.sqrt(_as_float(x)),
    "abs": lambda x, n: np.abs(x),
    "tanh": lambda x, n: np.tanh(_as_float(x)),
    "sigmoid": lambda x, n: _sigmoid(x),
    "relu": lambda x, n: np.maximum(x, 0),
    "gelu": lambda x, n: _gelu(x, n.attr("approximate", "none")),
    "silu": lambda x, n: _as_float(x) * _sigmoid(x),
    "erf": lambda x, n: _erf(_as_float(x)),
    "sin": lambda x, n: np.sin(_as_float(x)),
    "cos": lambda x, n: np.cos(_as_float(x)),
    "floor": lambda x, n: np.floor(x),
    "ceil": lambda x, n: np.ceil(x),
    "round": lambda x, n: np.round(x),
    "trunc": lambda x, n: np.trunc(x),
    "leaky_relu": lambda x, n: np.where(x > 0, x, x * n.attr("negative_slope")),
    "clamp": _clamp,
    "logical_not": lambda x, n: ~x.astype(bool),
    "cast": lambda x, n: _wide(round_to(x, n.attr("dtype"))),
}

BINARY: dict[str, Callable[[Array, Array], Array]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "div": lambda a, b: np.true_divide(_as_float(a), b),
    "pow": lambda a, b: np.power(_as_float(a), b),
    "maximum": np.maximum, "minimum": np.minimum,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "eq": np.equal, "ne": np.not_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or,
}


def _reduce(x: Array, node: Node) -> Array:
    dims, keepdim = node.attr("dim"), node.attr("keepdim")
    op = node.op
    if op in ("argmax", "argmin"):
        if len(dims) == x.ndim and x.ndim != 1:      # torch flattens when dim=None
            flat = np.argmax(x.reshape(-1)) if op == "argmax" else np.argmin(x.reshape(-1))
            out = np.asarray(flat, dtype=np.int64)
            return out.reshape((1,) * x.ndim) if keepdim else out
        fn = np.argmax if op == "argmax" else np.argmin
        return fn(x, axis=dims[0], keepdims=keepdim).astype(np.int64)
    fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}[op]
    return fn(x, axis=dims, keepdims=keepdim)


def _softmax(x: Array, node: Node) -> Array:
    dim = node.attr("dim")
    x = _as_float(x)
    shifted = x - np.max(x, axis=dim, keepdims=True)
    if node.op == "log_softmax":
        return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))
    e = np.exp(shifted)
    return e / np.sum(e, axis=dim, keepdims=True)


def _norm(args: list[Array], node: Node) -> Array:
    x = _as_float(args[0])
    eps = node.attr("eps")
    axes = tuple(range(-node.attr("axes", 1), 0))
    if node.op == "layer_norm":
        mean = x.mean(axis=axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (x - mean) / np.sqrt(var + eps)
        if len(args) > 1:
            y = y * args[1]
        if len(args) > 2:
            y = y + args[2]
        return y
    if eps is None:   # torch.nn.functional.rms_norm: the input dtype's machine epsilon
        in_dtype = node.args[0].dtype
        eps = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10}.get(in_dtype.name, float(np.finfo(in_dtype.numpy).eps))
    y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return y * args[1] if len(args) > 1 else y


def _window_slices(start: int, count: int, step: int) -> slice:
    return slice(start, start + step * (count - 1) + 1, step)


def _conv(args: list[Array], node: Node) -> Array:
    """Direct convolution (cross-correlation, as torch) over 1-3 spatial dims, with groups."""
    x, w = _as_float(args[0]), _as_float(args[1])
    d = x.ndim - 2
    stride, padding, dilation = node.attr("stride"), node.attr("padding"), node.attr("dilation")
    groups = node.attr("groups", 1)
    out_sizes = tuple(int(v) for v in node.shape[2:])
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))
    n, c = x.shape[:2]
    k = w.shape[0]
    cg, kg = c // groups, k // groups
    out = np.zeros((n, k) + out_sizes)
    for taps in np.ndindex(*w.shape[2:]):
        window = xp[(slice(None), slice(None)) + tuple(
            _window_slices(t * dl, o, st) for t, dl, o, st in zip(taps, dilation, out_sizes, stride))]
        for g in range(groups):
            part = window[:, g * cg:(g + 1) * cg]
            tap = w[(slice(g * kg, (g + 1) * kg), slice(None)) + taps]
            out[:, g * kg:(g + 1) * kg] += np.moveaxis(np.tensordot(part, tap, axes=([1], [1])), -1, 1)
    if len(args) > 2:
        out += _as_float(args[2]).reshape((1, k) + (1,) * d)
    return out


def _conv_transpose(args: list[Array], node: Node) -> Array:
    """Transposed convolution: every input element scatters its weighted kernel into the output
    (computed on the output grown by the padding, which is then cropped away)."""
    x, w = _as_float(args[0]), _as_float(args[1])
    d = x.ndim - 2
    stride, padding, dilation = node.attr("stride"), node.attr("padding"), node.attr("dilation")
    groups = node.attr("groups", 1)
    n, c = x.shape[:2]
    cg, kg = c // groups, w.shape[1]
    out_sizes = tuple(int(v) for v in node.shape[2:])
    big = np.zeros((n, kg * groups) + tuple(o + 2 * p for o, p in zip(out_sizes, padding)))
    in_sizes = x.shape[2:]
    for taps in np.ndindex(*w.shape[2:]):
        target = tuple(_window_slices(t * dl, i, st)
                       for t, dl, i, st in zip(taps, dilation, in_sizes, stride))
        for g in range(groups):
            tap = w[(slice(g * cg, (g + 1) * cg), slice(None)) + taps]       # [cg, kg]
            contrib = np.tensordot(x[:, g * cg:(g + 1) * cg], tap, axes=([1], [0]))
            big[(slice(None), slice(g * kg, (g + 1) * kg)) + target] += np.moveaxis(contrib, -1, 1)
    out = big[(slice(None), slice(None)) + tuple(slice(p, p + o) for p, o in zip(padding, out_sizes))]
    if len(args) > 2:
        out = out + _as_float(args[2]).reshape((1, -1) + (1,) * d)
    return out


def _pool(x: Array, node: Node) -> Array:
    """Max / average pooling over the trailing 1-3 dims, with PyTorch's padding, dilation,
    ceil_mode and count_include_pad rules (windows are clipped to the padded input)."""
    kernel, stride, padding = node.attr("kernel_size"), node.attr("stride"), node.attr("padding")
    dilation = node.attr("dilation") or (1,) * len(kernel)
    d = len(kernel)
    lead = x.ndim - d
    out_sizes = tuple(int(v) for v in node.shape[lead:])
    in_sizes = x.shape[lead:]
    is_max = node.op.startswith("max")
    fill = -np.inf if is_max else 0.0
    extra = tuple(max(0, (o - 1) * s + (k - 1) * dl + 1 - (i + 2 * p))
                  for o, s, k, dl, i, p in zip(out_sizes, stride, kernel, dilation, in_sizes, padding))
    xp = np.pad(_as_float(x), ((0, 0),) * lead + tuple((p, p + e) for p, e in zip(padding, extra)),
                constant_values=fill)
    out = np.full(x.shape[:lead] + out_sizes, fill)
    for taps in np.ndindex(*kernel):
        window = xp[(slice(None),) * lead + tuple(
            _window_slices(t * dl, o, st) for t, dl, o, st in zip(taps, dilation, out_sizes, stride))]
        out = np.maximum(out, window) if is_max else out + window
    if is_max:
        return out
    divisor = np.ones(out_sizes)
    for axis, (o, s, k, p, i) in enumerate(zip(out_sizes, stride, kernel, padding, in_sizes)):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, i + p)
        count = end - start
        if not node.attr("count_include_pad", True):
            count = np.minimum(end, i) - np.maximum(start, 0)
        shape = [1] * d
        shape[axis] = o
        divisor = divisor * count.reshape(shape)
    return out / divisor


def _index(node: Node, shape: tuple[int, ...]) -> Array:
    dim = node.attr("dim")
    line = np.arange(shape[dim], dtype=np.int64).reshape([-1 if i == dim else 1 for i in range(len(shape))])
    return np.broadcast_to(line, shape)


def _bind_symbols(program: Program, inputs: dict[str, Array]) -> dict[str, int]:
    bound: dict[str, int] = {}
    for name, decl in program.inputs.items():
        if name not in inputs:
            raise ValueError(f"missing input '{name}'")
        actual = inputs[name].shape
        if len(actual) != len(decl.shape):
            raise ValueError(f"input '{name}' has rank {len(actual)}, declared {len(decl.shape)}")
        for want, got in zip(decl.shape, actual):
            if isinstance(want, int) and want != got:
                raise ValueError(f"input '{name}' has shape {actual}, declared {list(decl.shape)}")
            if isinstance(want, str) and bound.setdefault(want, got) != got:
                raise ValueError(f"symbol {want} bound to both {bound[want]} and {got}")
    return bound


def _gather(x: Array, index: Array, dim: int) -> Array:
    """torch.gather with indices clamped to x's extent along dim (ops._gather)."""
    window = tuple(slice(0, m) if d != dim else slice(None) for d, m in enumerate(index.shape))
    clamped = np.clip(index.astype(np.int64), 0, x.shape[dim] - 1)
    return np.take_along_axis(x[window], clamped, axis=dim)


def evaluate(program: Program, inputs: dict[str, Array], symbols: dict[str, int] | None = None) -> Array:
    """The program's output for `inputs`, rounded to the output dtype."""
    bound = _bind_symbols(program, inputs)
    for name, value in (symbols or {}).items():
        if name in bound and bound[name] != value:
            raise ValueError(f"symbol {name}={value} disagrees with the inputs ({bound[name]})")
    values: dict[int, Array] = {}
    for node in program.output.walk():
        args = [values[id(a)] for a in node.args]
        if node.op == "index":
            sizes = tuple(bound.get(d, (symbols or {}).get(d, 0)) if isinstance(d, str) else d
                          for d in node.shape)
            values[id(node)] = _index(node, sizes)
            continue
        values[id(node)] = _eval_node(node, args, inputs)
    return round_to(values[id(program.output)], program.output.dtype)


def _eval_node(node: Node, args: list[Array], inputs: dict[str, Array]) -> Array:
    op = node.op
    if op == "input":
        return _wide(np.asarray(inputs[node.name]))
    if op == "const":
        return np.asarray(node.value)
    if op in UNARY:
        return UNARY[op](args[0], node)
    if op in BINARY:
        return BINARY[op](args[0], args[1])
    if op == "where":
        return np.where(args[0].astype(bool), args[1], args[2])
    if op in ("sum", "mean", "max", "min", "prod", "argmax", "argmin"):
        return _reduce(args[0], node)
    if op == "moments":
        x, dims = args[0], node.attr("dim")
        return np.stack([np.mean(x, axis=dims, keepdims=True), np.var(x, axis=dims, keepdims=True)])
    if op in ("softmax", "log_softmax"):
        return _softmax(args[0], node)
    if op in ("layer_norm", "rms_norm"):
        return _norm(args, node)
    if op == "cumsum":
        return np.cumsum(args[0], axis=node.attr("dim"))
    if op == "cumprod":
        return np.cumprod(args[0], axis=node.attr("dim"))
    if op == "flip":
        return np.flip(args[0], axis=node.attr("dims"))
    if op == "reshape":
        return np.reshape(args[0], node.attr("shape"))
    if op == "slice":
        dim = node.attr("dim")
        taken = node.attr("start") + node.attr("step") * np.arange(int(node.shape[dim]))
        return np.take(args[0], taken, axis=dim)
    if op == "pad":
        mode = node.attr("mode", "constant")
        if mode == "constant":
            return np.pad(args[0], node.attr("pads"), constant_values=node.attr("value"))
        return np.pad(args[0], node.attr("pads"), mode={"reflect": "reflect", "replicate": "edge",
                                                        "circular": "wrap"}[mode])
    if op == "gather":
        return _gather(args[0], args[1], node.attr("dim"))
    if op == "permute":
        return np.transpose(args[0], node.attr("dims"))
    if op == "matmul":
        return np.matmul(_as_float(args[0]), _as_float(args[1]))
    if op.startswith("conv_transpose"):
        return _conv_transpose(args, node)
    if op.startswith("conv"):
        return _conv(args, node)
    if "_pool" in op:
        return _pool(args[0], node)
    if op == "torch":
        names = node.attr("names")
        return torch_expr.evaluate(node.attr("expr"), dict(zip(names, args)),
                                   {n: a.dtype for n, a in zip(names, node.args)})
    raise ValueError(f"no reference for operator '{op}'")
