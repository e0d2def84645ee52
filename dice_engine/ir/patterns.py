"""Pattern classification: which kernel family serves a program, and around which operator.

A program is at most one "anchor" (a heavy operator: reduction, softmax, norm, scan, permute,
matmul, conv, pool) with elementwise work before it (the prologue, inside the anchor's
arguments) and after it (the epilogue, the output expression with the anchor as a leaf).
A transpose feeding a matmul directly from an input is a layout, not an anchor.
"""
from __future__ import annotations

from dataclasses import dataclass

from .graph import Node, Program
from .ops import HEAVY, REDUCTIONS

PATTERN_OF_OP = {
    **{op: "reduction" for op in REDUCTIONS},
    "softmax": "softmax", "log_softmax": "softmax",
    "layer_norm": "norm", "rms_norm": "norm",
    "cumsum": "scan",
    "permute": "transpose",
    "matmul": "gemm",
    "conv2d": "conv2d",
    "max_pool2d": "pool", "avg_pool2d": "pool",
    "torch": "torch",     # any PyTorch expression: no sketch family, only a model backend
}


class PatternError(ValueError):
    """The program needs more than one kernel (or a form no sketch family covers)."""


@dataclass
class Problem:
    program: Program
    pattern: str          # elementwise | reduction | softmax | norm | scan | transpose | gemm | conv2d | pool
                          # | torch | model (several kernels, for a model backend)
    anchor: Node | None   # the heavy node; None for elementwise programs

    @property
    def output(self) -> Node:
        """The output expression (the epilogue; the anchor is a leaf of it)."""
        return self.program.output


def _is_layout_view(node: Node, parent: Node) -> bool:
    return (node.op == "permute" and parent.op == "matmul"
            and node.args[0].op == "input" and node.rank >= 2
            and node.attr("dims")[-2:] == (node.rank - 1, node.rank - 2))


def heavy_nodes(program: Program) -> list[Node]:
    layout = {id(a) for n in program.output.walk() for a in n.args if _is_layout_view(a, n)}
    return [n for n in program.output.walk() if n.op in HEAVY and id(n) not in layout]


def classify(program: Program) -> Problem:
    heavy = heavy_nodes(program)
    if not heavy:
        return Problem(program, "elementwise", None)
    if len(heavy) > 1:
        names = " and ".join(sorted({n.op for n in heavy}))
        raise PatternError(f"this intent needs more than one kernel ({names}); "
                           "write one intent per heavy operation")
    anchor = heavy[0]
    return Problem(program, PATTERN_OF_OP[anchor.op], anchor)
