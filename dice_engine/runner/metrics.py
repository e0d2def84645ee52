"""The two numbers behind every measurement: the fewest bytes a kernel must move (each input read
once, the output written once) and the floating-point work of GEMM and convolution; with the
machine's measured ceilings they give GB/s, TFLOP/s and the fraction of the roofline reached."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..ir.patterns import Problem
from .inputs import concrete


@dataclass
class Ceilings:
    """Measured once per machine: device-to-device copy (bytes read + written) and library GEMM
    rate per operand dtype ("f32" without TF32, "f16", "bf16")."""
    gpu: str
    copy_gbps: float
    gemm_tflops: dict[str, float] = field(default_factory=dict)


def bytes_moved(problem: Problem, bindings: dict[str, int]) -> int:
    prog = problem.program
    total = sum(math.prod(concrete(d.shape, bindings)) * d.dtype.size for d in prog.inputs.values())
    return total + math.prod(concrete(prog.output.shape, bindings)) * prog.output.dtype.size


def flops(problem: Problem, bindings: dict[str, int]) -> int | None:
    """Multiply-adds ×2 of the anchor, for GEMM and convolution; None for memory-bound patterns."""
    node = problem.anchor
    if node is None or node.op not in ("matmul", "conv2d"):
        return None
    out = concrete(node.shape, bindings)
    if node.op == "matmul":
        k = concrete(node.args[0].shape, bindings)[-1]
        return 2 * math.prod(out) * k
    c, r, s = concrete(node.args[1].shape, bindings)[1:]
    return 2 * math.prod(out) * c * r * s


def operand_dtype(problem: Problem) -> str | None:
    node = problem.anchor
    return node.args[0].dtype.name if node is not None and node.op in ("matmul", "conv2d") else None


@dataclass
class Rates:
    gbps: float
    tflops: float | None
    roofline_fraction: float | None


def rates(problem: Problem, bindings: dict[str, int], time_us: float, ceilings: Ceilings | None) -> Rates:
    seconds = time_us * 1e-6
    moved = bytes_moved(problem, bindings)
    work = flops(problem, bindings)
    fraction = None
    if ceilings is not None:
        floor = moved / (ceilings.copy_gbps * 1e9)
        rate = ceilings.gemm_tflops.get(operand_dtype(problem) or "")
        if work is not None and rate:
            floor = max(floor, work / (rate * 1e12))
        fraction = floor / seconds
    return Rates(moved / seconds / 1e9, work / seconds / 1e12 if work is not None else None, fraction)
