"""A program of the tensor IR as PyTorch eager calls: the baseline the runner and the benchmark time.

The DAG is flattened once into a list of steps, so a call costs what the PyTorch operators cost
plus a short Python loop, as a hand-written module's forward would."""
from __future__ import annotations

from typing import Any, Callable

import torch
import torch.nn.functional as F

from ..ir import torch_expr
from ..ir.graph import Node, Program

Value = Any   # a torch.Tensor, or a Python scalar for constants


def _tensor_like(value: Value, like: torch.Tensor) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    return torch.tensor(value, dtype=like.dtype, device=like.device)


def _reduce(x: torch.Tensor, node: Node) -> torch.Tensor:
    dims, keep = node.attr("dim"), node.attr("keepdim")
    op = node.op
    if op in ("argmax", "argmin"):
        fn = torch.argmax if op == "argmax" else torch.argmin
        return fn(x, dim=dims[0], keepdim=keep) if len(dims) == 1 else fn(x)
    if op == "prod":
        for d in sorted(dims, reverse=True):
            x = torch.prod(x, dim=d, keepdim=keep)
        return x
    fn = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}[op]
    return fn(x, dim=dims, keepdim=keep)


def _binary(op: str, a: Value, b: Value) -> Value:
    if op in ("maximum", "minimum", "logical_and", "logical_or"):
        like = a if isinstance(a, torch.Tensor) else b
        fn = {"maximum": torch.maximum, "minimum": torch.minimum,
              "logical_and": torch.logical_and, "logical_or": torch.logical_or}[op]
        return fn(_tensor_like(a, like), _tensor_like(b, like))
    return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
            "pow": lambda: a ** b, "lt": lambda: a < b, "le": lambda: a <= b, "gt": lambda: a > b,
            "ge": lambda: a >= b, "eq": lambda: a == b, "ne": lambda: a != b}[op]()


def slice_view(x: torch.Tensor, node: Node) -> torch.Tensor:
    """An IR slice node's value: every `step`-th element from `start` along `dim`."""
    dim, start, step = node.attr("dim"), node.attr("start"), node.attr("step")
    stop = start + step * (int(node.shape[dim]) - 1) + 1
    return x[(slice(None),) * dim + (slice(start, stop, step),)]


def gather_clamped(x: torch.Tensor, index: torch.Tensor, dim: int) -> torch.Tensor:
    """An IR gather's value: torch.gather with the indices clamped to x's extent along dim."""
    return torch.gather(x, dim, index.long().clamp(0, x.shape[dim] - 1))


def pad_view(x: torch.Tensor, node: Node) -> torch.Tensor:
    """An IR pad node's value: constant padding as F.pad (pairs last dimension first); the
    other modes gather each padded dimension's source indices (any rank, any dimension)."""
    mode = node.attr("mode", "constant")
    if mode == "constant":
        flat = [v for pair in reversed(node.attr("pads")) for v in pair]
        return F.pad(x, flat, mode="constant", value=float(node.attr("value")))
    for d, (lo, hi) in enumerate(node.attr("pads")):
        if lo or hi:
            n = x.shape[d]
            j = torch.arange(-lo, n + hi, device=x.device)
            if mode == "reflect":
                j = j.abs()
                j = torch.where(j >= n, 2 * (n - 1) - j, j)
            elif mode == "replicate":
                j = j.clamp(0, n - 1)
            else:
                j = j.remainder(n)
            x = x.index_select(d, j)
    return x


def _step(node: Node, args: list[Value]) -> Value:
    op, a = node.op, node.attr
    x = args[0] if args else None
    simple: dict[str, Callable[[], Value]] = {
        "exp": lambda: torch.exp(x), "log": lambda: torch.log(x), "sqrt": lambda: torch.sqrt(x),
        "rsqrt": lambda: torch.rsqrt(x), "tanh": lambda: torch.tanh(x), "sigmoid": lambda: torch.sigmoid(x),
        "gelu": lambda: F.gelu(x, approximate=a("approximate", "none")), "silu": lambda: F.silu(x),
        "erf": lambda: torch.special.erf(x),
        "sin": lambda: torch.sin(x), "cos": lambda: torch.cos(x), "floor": lambda: torch.floor(x),
        "ceil": lambda: torch.ceil(x), "round": lambda: torch.round(x), "trunc": lambda: torch.trunc(x),
        "neg": lambda: -x, "abs": lambda: torch.abs(x), "relu": lambda: torch.relu(x),
        "leaky_relu": lambda: F.leaky_relu(x, a("negative_slope", 0.01)),
        "clamp": lambda: torch.clamp(x, min=a("min"), max=a("max")),
        "cast": lambda: x.to(getattr(torch, a("dtype").torch)), "logical_not": lambda: torch.logical_not(x),
        "where": lambda: torch.where(args[0], args[1], args[2]),
        "softmax": lambda: torch.softmax(x, dim=a("dim")),
        "log_softmax": lambda: torch.log_softmax(x, dim=a("dim")),
        "layer_norm": lambda: F.layer_norm(x, tuple(x.shape[x.dim() - a("axes", 1):]),
                                           *(args[1:] + [None] * (3 - len(args))), eps=a("eps")),
        "rms_norm": lambda: F.rms_norm(x, tuple(x.shape[x.dim() - a("axes", 1):]),
                                       args[1] if len(args) > 1 else None, eps=a("eps")),
        "cumsum": lambda: torch.cumsum(x, dim=a("dim")),
        "cumprod": lambda: torch.cumprod(x, dim=a("dim")),
        "flip": lambda: torch.flip(x, dims=a("dims")),
        "reshape": lambda: x.reshape(a("shape")),
        "slice": lambda: slice_view(x, node),
        "pad": lambda: pad_view(x, node),
        "gather": lambda: gather_clamped(x, args[1], a("dim")),
        "permute": lambda: x.permute(*a("dims")),
        "matmul": lambda: torch.matmul(args[0], args[1]),
    }
    if op in simple:
        return simple[op]()
    if op == "torch":
        return torch_expr.run(a("expr"), dict(zip(a("names"), args)))
    if op.startswith("conv"):
        bias = args[2] if len(args) > 2 else None
        conv = getattr(F, op)
        if op.startswith("conv_transpose"):
            return conv(x, args[1], bias, stride=a("stride"), padding=a("padding"),
                        output_padding=a("output_padding"), groups=a("groups", 1), dilation=a("dilation"))
        return conv(x, args[1], bias, stride=a("stride"), padding=a("padding"), dilation=a("dilation"),
                    groups=a("groups", 1))
    if "_pool" in op:
        if op.startswith("max"):
            d = len(a("kernel_size"))
            return getattr(F, op)(x, a("kernel_size"), a("stride"), a("padding"),
                                  dilation=a("dilation", (1,) * d), ceil_mode=a("ceil_mode", False))
        return getattr(F, op)(x, a("kernel_size"), a("stride"), a("padding"), ceil_mode=a("ceil_mode", False),
                              count_include_pad=a("count_include_pad", True))
    if op in ("sum", "mean", "max", "min", "prod", "argmax", "argmin"):
        return _reduce(x, node)
    if op == "moments":
        var, mean = torch.var_mean(x, dim=a("dim"), correction=0, keepdim=True)
        return torch.stack([mean, var])
    return _binary(op, args[0], args[1])


def torch_function(program: Program) -> Callable[[dict[str, torch.Tensor]], torch.Tensor]:
    """fn(inputs by name) -> the output tensor (contiguous, as the DICE kernel writes it)."""
    order = list(program.output.walk())
    slot = {id(n): i for i, n in enumerate(order)}
    plan = [(n, [slot[id(x)] for x in n.args]) for n in order]

    def run(inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        values: list[Value] = []
        for node, arg_slots in plan:
            if node.op == "input":
                values.append(inputs[node.name])
            elif node.op == "const":
                values.append(node.value)
            elif node.op == "index":    # an arange along one dim, broadcast over the others
                dim, shape = node.attr("dim"), tuple(int(d) for d in node.shape)
                device = next(iter(inputs.values())).device
                line = torch.arange(shape[dim], device=device).reshape(
                    [-1 if k == dim else 1 for k in range(len(shape))])
                values.append(line.expand(shape))
            else:
                values.append(_step(node, [values[i] for i in arg_slots]))
        return values[-1].contiguous()

    return run
