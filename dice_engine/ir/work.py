"""The work a problem asks for at its concrete shapes: floating-point operations and the bytes
a kernel must move to and from DRAM at least (each input read once, the output written once).

Symbols without a value take the shape hint of `Program.concrete_shape`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .graph import Node, Program, Shape
from .ops import CONVS, REDUCTIONS
from .patterns import Problem

# Operations per element for the costlier elementwise functions (hardware SFU sequences).
_ELEMENTWISE_FLOPS = {"exp": 4, "log": 4, "sqrt": 2, "rsqrt": 2, "tanh": 6, "sigmoid": 6, "silu": 7, "erf": 8,
                      "sin": 6, "cos": 6, "gelu": 10, "pow": 8, "div": 2}
_ROW_OP_FLOPS = {"softmax": 5, "log_softmax": 6, "layer_norm": 8, "rms_norm": 5, "cumsum": 1}


@dataclass(frozen=True)
class GemmShape:
    """A matmul, or a convolution read as an implicit GEMM: one GEMM per group (batch), output
    positions as rows (m), a group's output channels as columns (n), and the taps each output
    sums as depth (k; for a transposed convolution the average over its stride phases)."""
    batch: int
    m: int
    n: int
    k: int


@dataclass(frozen=True)
class Work:
    flops: float
    dram_bytes: float
    gemm: GemmShape | None = None


def _numel(program: Program, shape: Shape) -> int:
    return math.prod(program.concrete_shape(shape))


def _gemm_shape(program: Program, node: Node) -> GemmShape:
    if node.op == "matmul":
        a, b = node.args
        m, k = program.concrete_shape(a.shape)[-2:]
        n = program.concrete_shape(b.shape)[-1]
        return GemmShape(_numel(program, node.shape) // (m * n), m, n, k)
    batch, out_channels, *spatial = program.concrete_shape(node.shape)       # a convolution
    groups = node.attr("groups") or 1
    m, n = batch * math.prod(spatial), out_channels // groups
    return GemmShape(groups, m, n, max(1, round(_conv_flops(program, node) / (2.0 * groups * m * n))))


def _conv_flops(program: Program, node: Node) -> float:
    """Every rank, grouped and transposed: one multiply-add per tap per channel."""
    x, w = node.args[0], node.args[1]
    per_tap = math.prod(program.concrete_shape(w.shape[1:]))
    source = x if node.op.startswith("conv_transpose") else node
    return 2.0 * _numel(program, source.shape) * per_tap


def _node_flops(program: Program, node: Node) -> float:
    if node.op == "matmul":
        g = _gemm_shape(program, node)
        return 2.0 * g.batch * g.m * g.n * g.k
    if node.op in CONVS:
        return _conv_flops(program, node)
    if node.op in ("max_pool2d", "avg_pool2d"):
        kh, kw = node.attr("kernel_size")
        return float(_numel(program, node.shape) * kh * kw)
    if node.op in REDUCTIONS:
        return float(_numel(program, node.args[0].shape))
    if node.op == "moments":   # a Welford step per element: subtract, divide, two multiply-adds
        return 4.0 * _numel(program, node.args[0].shape)
    if node.op in _ROW_OP_FLOPS:
        return float(_ROW_OP_FLOPS[node.op] * _numel(program, node.shape))
    if node.op == "permute":
        return 0.0
    return float(_ELEMENTWISE_FLOPS.get(node.op, 1) * _numel(program, node.shape))


def work(problem: Problem) -> Work:
    program = problem.program
    flops = sum(_node_flops(program, n) for n in program.output.walk() if n.op not in ("input", "const"))
    moved = sum(_numel(program, d.shape) * d.dtype.size for d in program.inputs.values())
    moved += _numel(program, program.output.shape) * program.output.dtype.size
    anchor = problem.anchor
    contraction = anchor is not None and (anchor.op == "matmul" or anchor.op in CONVS)
    gemm = _gemm_shape(program, anchor) if contraction else None
    return Work(flops, float(moved), gemm)
