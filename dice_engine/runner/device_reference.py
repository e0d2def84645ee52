"""The reference evaluator of `ir.reference` written with torch, so that it runs where the
inputs are (the GPU): the same function, operator by operator, rounded once to the output dtype.

Two precisions:
- wide (the default): every float value in float64 and every integer in int64, as the numpy
  evaluator computes;
- narrow, for when float64 copies of the tensors would not fit beside the candidate's buffers:
  float values in float32 (float64 stays float64), every sum (reductions, means, softmax
  denominators, norm moments, scans, GEMM and convolution dot products) accumulated in float64.
"""
from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F

from ..ir import ops, torch_expr
from ..ir.dtypes import DType
from ..ir.graph import Node, Program
from .torch_program import gather_clamped, pad_view, slice_view

Tensor = torch.Tensor
# GEMM/convolution rows (output elements) per float64 chunk in narrow mode
NARROW_CHUNK_ELEMENTS = 1 << 26


def torch_dtype(dtype: DType) -> torch.dtype:
    return getattr(torch, dtype.torch)


def round_to(values: Tensor, dtype: DType) -> Tensor:
    """`values` rounded to `dtype`; bf16 through float32 as the numpy evaluator rounds it."""
    if dtype.name == "bf16":
        return values.to(torch.float32).to(torch.bfloat16)
    return values.to(torch_dtype(dtype))


def wide_bytes(program: Program, bindings: dict[str, int]) -> int:
    """An upper bound on the memory the wide evaluation holds at once (8 bytes per element of
    every node's value, as if none were freed early)."""
    total = 0
    for node in program.output.walk():
        extents = [d if isinstance(d, int) else bindings[d] for d in node.shape]
        total += 8 * math.prod(extents)
    return total


class _Evaluator:
    def __init__(self, device: torch.device, wide: bool, has_f64: bool):
        self.device = device
        self.wide = wide
        self.work = torch.float64 if wide or has_f64 else torch.float32

    # -- value forms ----------------------------------------------------------------------

    def widen(self, x: Tensor) -> Tensor:
        """float → the working float dtype, integer → int64, bool as is (`reference._wide`)."""
        if x.dtype == torch.bool:
            return x
        if x.is_floating_point():
            return x.to(self.work)
        return x.to(torch.int64)

    def float_(self, x: Tensor) -> Tensor:
        return x.to(self.work)

    def const(self, value: float | int | bool) -> Tensor:
        if isinstance(value, bool):
            dtype = torch.bool
        elif isinstance(value, int):
            dtype = torch.int64
        else:
            dtype = torch.float64 if self.wide else self.work
        return torch.tensor(value, dtype=dtype, device=self.device)

    def sum_(self, x: Tensor, dim: int | tuple[int, ...], keepdim: bool) -> Tensor:
        """A sum in float64 for floats (held in the working dtype), int64 for integers."""
        if x.is_floating_point():
            return torch.sum(x, dim=dim, keepdim=keepdim, dtype=torch.float64).to(self.work)
        return torch.sum(x, dim=dim, keepdim=keepdim)

    def mean_(self, x: Tensor, dim: int | tuple[int, ...], keepdim: bool) -> Tensor:
        dims = (dim,) if isinstance(dim, int) else dim
        count = math.prod(x.shape[d] for d in dims)
        return self.sum_(self.float_(x), dim, keepdim) / count

    # -- operators ------------------------------------------------------------------------

    def unary(self, op: str, x: Tensor, node: Node) -> Tensor:
        f = self.float_
        table: dict[str, Callable[[], Tensor]] = {
            "neg": lambda: -x,
            "exp": lambda: torch.exp(f(x)),
            "log": lambda: torch.log(f(x)),
            "sqrt": lambda: torch.sqrt(f(x)),
            "rsqrt": lambda: 1.0 / torch.sqrt(f(x)),
            "abs": lambda: torch.abs(x),
            "tanh": lambda: torch.tanh(f(x)),
            "sigmoid": lambda: torch.sigmoid(f(x)),
            "relu": lambda: torch.maximum(x, self.const(0)),
            "gelu": lambda: self.gelu(f(x), node.attr("approximate", "none")),
            "silu": lambda: f(x) * torch.sigmoid(f(x)),
            "erf": lambda: torch.special.erf(f(x)),
            "sin": lambda: torch.sin(f(x)),
            "cos": lambda: torch.cos(f(x)),
            "floor": lambda: torch.floor(x),
            "ceil": lambda: torch.ceil(x),
            "round": lambda: torch.round(x),
            "trunc": lambda: torch.trunc(x),
            "leaky_relu": lambda: torch.where(x > 0, x, x * self.const(node.attr("negative_slope"))),
            "clamp": lambda: self.clamp(x, node),
            "logical_not": lambda: torch.logical_not(x),
            "cast": lambda: self.widen(round_to(x, node.attr("dtype"))),
        }
        return table[op]()

    @staticmethod
    def gelu(x: Tensor, approximate: str) -> Tensor:
        if approximate == "tanh":
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
        return 0.5 * x * (1.0 + torch.special.erf(x / math.sqrt(2.0)))

    def clamp(self, x: Tensor, node: Node) -> Tensor:
        lo, hi = node.attr("min"), node.attr("max")
        if lo is not None:
            x = torch.maximum(x, self.const(lo))
        if hi is not None:
            x = torch.minimum(x, self.const(hi))
        return x

    def binary(self, op: str, a: Tensor, b: Tensor) -> Tensor:
        table: dict[str, Callable[[], Tensor]] = {
            "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
            "div": lambda: self.float_(a) / b, "pow": lambda: torch.pow(self.float_(a), b),
            "maximum": lambda: torch.maximum(a, b), "minimum": lambda: torch.minimum(a, b),
            "lt": lambda: a < b, "le": lambda: a <= b, "gt": lambda: a > b, "ge": lambda: a >= b,
            "eq": lambda: a == b, "ne": lambda: a != b,
            "logical_and": lambda: torch.logical_and(a, b), "logical_or": lambda: torch.logical_or(a, b),
        }
        return table[op]()

    def reduce(self, x: Tensor, node: Node) -> Tensor:
        dims, keepdim, op = node.attr("dim"), node.attr("keepdim"), node.op
        if op in ("argmax", "argmin"):
            fn = torch.argmax if op == "argmax" else torch.argmin
            if len(dims) == x.ndim and x.ndim != 1:    # torch flattens when dim=None
                flat = fn(x.reshape(-1))
                return flat.reshape((1,) * x.ndim) if keepdim else flat
            return fn(x, dim=dims[0], keepdim=keepdim)
        if op == "sum":
            return self.sum_(x, dims, keepdim)
        if op == "mean":
            return self.mean_(x, dims, keepdim)
        if op == "prod":
            if x.dtype == torch.bool:
                x = x.to(torch.int64)
            for d in sorted(dims, reverse=True):
                x = torch.prod(x, dim=d, keepdim=keepdim)
            return x
        return (torch.amax if op == "max" else torch.amin)(x, dim=dims, keepdim=keepdim)

    def softmax(self, x: Tensor, node: Node) -> Tensor:
        dim = node.attr("dim")
        x = self.float_(x)
        shifted = x - torch.amax(x, dim=dim, keepdim=True)
        if node.op == "log_softmax":
            return shifted - torch.log(self.sum_(torch.exp(shifted), dim, True))
        e = torch.exp(shifted)
        return e / self.sum_(e, dim, True)

    def norm(self, args: list[Tensor], node: Node) -> Tensor:
        x = self.float_(args[0])
        eps = node.attr("eps")
        axes = tuple(range(-node.attr("axes", 1), 0))    # the normalised trailing axes
        if node.op == "layer_norm":
            mean = self.mean_(x, axes, True)
            centred = x - mean
            y = centred / torch.sqrt(self.mean_(centred * centred, axes, True) + eps)
            if len(args) > 1:
                y = y * args[1]
            if len(args) > 2:
                y = y + args[2]
            return y
        if eps is None:   # torch.nn.functional.rms_norm: the input dtype's machine epsilon
            eps = torch.finfo(torch_dtype(node.args[0].dtype)).eps
        y = x / torch.sqrt(self.mean_(x * x, axes, True) + eps)
        return y * args[1] if len(args) > 1 else y

    def cumsum(self, x: Tensor, dim: int) -> Tensor:
        if x.is_floating_point():
            return torch.cumsum(x, dim=dim, dtype=torch.float64).to(self.work)
        return torch.cumsum(x, dim=dim)

    def matmul(self, a: Tensor, b: Tensor) -> Tensor:
        a, b = self.float_(a), self.float_(b)
        if self.work == torch.float64:
            return torch.matmul(a, b)
        # float64 dot products, a block of rows of `a` at a time
        rows = a.shape[-2]
        step = max(1, NARROW_CHUNK_ELEMENTS // max(1, b.shape[-1] * math.prod(a.shape[:-2])))
        out = torch.empty(torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (rows, b.shape[-1]),
                          dtype=self.work, device=a.device)
        b64 = b.to(torch.float64)
        for start in range(0, rows, step):
            rows_64 = a[..., start:start + step, :].to(torch.float64)
            out[..., start:start + step, :] = torch.matmul(rows_64, b64)
        return out

    def conv(self, args: list[Tensor], node: Node) -> Tensor:
        """1-3-D convolutions, transposed or not, with groups: float64 sums, a block of images at
        a time when the work dtype is narrow."""
        x, w = self.float_(args[0]), args[1].to(torch.float64)
        bias = args[2].to(torch.float64) if len(args) > 2 else None
        attrs = {k: node.attr(k) for k in ("stride", "padding", "dilation")}
        attrs["groups"] = node.attr("groups", 1)
        if node.op.startswith("conv_transpose"):
            attrs["output_padding"] = node.attr("output_padding")
        conv = getattr(F, node.op)
        per_image = math.prod(node.shape[1:])     # output elements per image
        step = max(1, NARROW_CHUNK_ELEMENTS // per_image) if self.work != torch.float64 else x.shape[0]
        parts = [conv(x[i:i + step].to(torch.float64), w, bias, **attrs).to(self.work)
                 for i in range(0, x.shape[0], step)]
        return torch.cat(parts) if len(parts) > 1 else parts[0]

    def pool(self, x: Tensor, node: Node) -> Tensor:
        """1-3-D max / average pooling with PyTorch's own padding, dilation, ceil_mode and
        count_include_pad rules (averages in float64: a window's mean is a short sum)."""
        kernel = node.attr("kernel_size")
        pool = getattr(F, node.op)
        if node.op.startswith("max"):      # a maximum is exact in the work dtype: no float64 copy
            return pool(self.float_(x), kernel, node.attr("stride"), node.attr("padding"),
                        dilation=node.attr("dilation") or (1,) * len(kernel),
                        ceil_mode=node.attr("ceil_mode", False))
        out = pool(x.to(torch.float64), kernel, node.attr("stride"), node.attr("padding"),
                   ceil_mode=node.attr("ceil_mode", False),
                   count_include_pad=node.attr("count_include_pad", True))
        return out.to(self.work)

    @staticmethod
    def index(node: Node, device: torch.device) -> Tensor:
        """An arange along one dim, broadcast over the others."""
        dim, shape = node.attr("dim"), tuple(int(d) for d in node.shape)
        line = torch.arange(shape[dim], device=device)
        line = line.reshape([-1 if k == dim else 1 for k in range(len(shape))])
        return line.expand(shape)

    def node(self, node: Node, args: list[Tensor], inputs: dict[str, Tensor]) -> Tensor:
        op = node.op
        if op == "input":
            return self.widen(inputs[node.name])
        if op == "const":
            return self.const(node.value)
        if op == "where":
            return torch.where(args[0].to(torch.bool), args[1], args[2])
        if op in ("sum", "mean", "max", "min", "prod", "argmax", "argmin"):
            return self.reduce(args[0], node)
        if op == "moments":
            x, dims = args[0], node.attr("dim")
            mean = self.mean_(x, dims, True)
            return torch.stack([mean, self.mean_((x - mean) * (x - mean), dims, True)])
        if op in ("softmax", "log_softmax"):
            return self.softmax(args[0], node)
        if op in ("layer_norm", "rms_norm"):
            return self.norm(args, node)
        if op == "cumsum":
            return self.cumsum(args[0], node.attr("dim"))
        if op == "cumprod":
            x = args[0]
            if x.is_floating_point():
                return torch.cumprod(x, dim=node.attr("dim"), dtype=torch.float64).to(self.work)
            return torch.cumprod(x, dim=node.attr("dim"))
        if op == "flip":
            return torch.flip(args[0], dims=node.attr("dims"))
        if op == "reshape":
            return args[0].reshape(node.attr("shape"))
        if op == "slice":
            return slice_view(args[0], node)
        if op == "pad":
            return pad_view(args[0], node)
        if op == "gather":
            return gather_clamped(args[0], args[1], node.attr("dim"))
        if op == "index":
            return self.index(node, self.device)
        if op == "permute":
            return args[0].permute(*node.attr("dims"))
        if op == "matmul":
            return self.matmul(args[0], args[1])
        if op in ops.CONVS:
            return self.conv(args, node)
        if op in ops.POOLS:
            return self.pool(args[0], node)
        if op == "torch":      # a PyTorch expression: its meaning is PyTorch's, on widened inputs
            return torch_expr.run(node.attr("expr"), dict(zip(node.attr("names"), args)))
        if op in ops.UNARY:
            return self.unary(op, args[0], node)
        if op in ops.BINARY:
            return self.binary(op, args[0], args[1])
        raise ValueError(f"no reference for operator '{op}'")


def evaluate(program: Program, inputs: dict[str, Tensor], *, wide: bool = True) -> Tensor:
    """The program's output for `inputs` (tensors in their declared dtypes, on one device),
    rounded to the output dtype; values no later node needs are freed as the walk goes on."""
    order = list(program.output.walk())
    device = next(iter(inputs.values())).device if inputs else torch.device("cpu")
    has_f64 = any(d.dtype.name == "f64" for d in program.inputs.values())
    evaluator = _Evaluator(device, wide, has_f64)
    uses: dict[int, int] = {}
    for node in order:
        for a in node.args:
            uses[id(a)] = uses.get(id(a), 0) + 1
    values: dict[int, Tensor] = {}
    for node in order:
        args = [values[id(a)] for a in node.args]
        values[id(node)] = evaluator.node(node, args, inputs)
        for a in node.args:
            uses[id(a)] -= 1
            if uses[id(a)] == 0:
                del values[id(a)]
    return round_to(values[id(program.output)], program.output.dtype).contiguous()
