"""Pattern classification: which kernel family serves a program, and around which operator.

A program is at most one "anchor" (a heavy operator: reduction, softmax, norm, scan, permute,
matmul, conv, pool) with elementwise work before it (the prologue, inside the anchor's
arguments) and after it (the epilogue, the output expression with the anchor as a leaf).
A transpose feeding a matmul directly from an input is a layout, not an anchor. A program with
several anchors, or with operators no family reads, has the pattern "program": only the general
lowering (dice_engine/lowering) serves it.
"""
from __future__ import annotations

from dataclasses import dataclass

from .graph import Node, Program
from .ops import CONVS, HEAVY, POOLS, REDUCTIONS, SCANS, STATISTICS, VIEWS

# pools pool.direct serves (with batch and channel dims)
DIRECT_POOLS = {"max_pool2d", "avg_pool2d", "max_pool3d", "avg_pool3d"}

PATTERN_OF_OP = {
    **{op: "reduction" for op in REDUCTIONS},
    "softmax": "softmax", "log_softmax": "softmax",
    "layer_norm": "norm", "rms_norm": "norm",
    "cumsum": "scan", "cumprod": "scan",
    "permute": "transpose",
    "matmul": "gemm",
    "conv2d": "conv2d",
    # every other convolution (1-D/3-D, grouped, transposed): the N-d implicit GEMM and depthwise
    **{op: "conv" for op in CONVS - {"conv2d"}},
    **{op: "pool" for op in DIRECT_POOLS},
    "torch": "torch",     # any PyTorch expression: no sketch family, only a model backend
}


# Operators only the general lowering serves (no hand-written family reads them).
GENERAL_ONLY = VIEWS | STATISTICS | (POOLS - DIRECT_POOLS)

# Families whose every sketch reads its prologue and writes its epilogue at the produced
# element's position (sketches/fusion.py), where views (slice, pad, flip, reshape, position
# index) re-address their arguments: a view beside such an anchor leaves the program theirs.
VIEW_FUSING = {"scan", "transpose", "pool", "conv2d", "conv"}


@dataclass
class Problem:
    program: Program
    # elementwise | reduction | softmax | norm | scan | transpose | gemm | conv2d | conv (any other
    # convolution: 1-D/3-D, grouped, transposed) | pool, or
    # "program": several heavy operators, or ones only the general lowering serves; "torch": a
    # PyTorch expression only a model serves
    pattern: str
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


def _general_only(node: Node) -> bool:
    """Operators, or operator forms, that no hand-written family reads."""
    if node.op in GENERAL_ONLY:
        return True
    if node.op in DIRECT_POOLS:
        return node.rank != int(node.op[-2]) + 2
    if node.op in ("layer_norm", "rms_norm"):
        return node.attr("axes", 1) != 1
    if node.op == "matmul":   # 4-D and up only against a 2-D right operand: a GEMM over flattened rows
        return (any(a.rank > 3 for a in node.args) or node.rank > 3) and node.args[1].rank != 2
    return False


def _position_epilogue(general: list[Node], heavy: list[Node]) -> bool:
    """Whether the only general-only nodes are output positions (row, column, batch index)
    read by the epilogue of one matmul of rank 3 at most (triu/tril of a product): the GEMM
    epilogue knows every output element's position."""
    if len(heavy) != 1 or heavy[0].op != "matmul" or heavy[0].rank > 3:
        return False
    operands = {id(n) for a in heavy[0].args for n in a.walk()}
    return all(n.op == "index" and n.shape == heavy[0].shape and id(n) not in operands for n in general)


def reversed_scan(output: Node) -> Node | None:
    """The scan S of an output flip(S(flip(a, d), d), d), a scan from the end of dim d (the
    scan sketches read it as one), or None."""
    if output.op != "flip" or output.args[0].op not in SCANS:
        return None
    scan = output.args[0]
    dims = (scan.attr("dim"),)
    flipped = scan.args[0]
    if flipped.op != "flip" or output.attr("dims") != dims or flipped.attr("dims") != dims:
        return None
    return scan


def classify(program: Program) -> Problem:
    """The family pattern of `program`; "program" (served by the general lowering) when it has
    several heavy operators or one that no family reads."""
    heavy = heavy_nodes(program)
    if (scan := reversed_scan(program.output)) is not None and len(heavy) == 1:
        general = [n for n in scan.args[0].args[0].walk() if _general_only(n)]
        if not general:
            return Problem(program, "scan", scan)
    general = [n for n in program.output.walk() if _general_only(n)]
    if general and not _position_epilogue(general, heavy) and not _fused_views(general, heavy):
        return Problem(program, "program", heavy[-1] if len(heavy) == 1 else None)
    if not heavy:
        return Problem(program, "elementwise", None)
    if len(heavy) > 1:
        return Problem(program, "program", None)
    return Problem(program, _anchor_pattern(heavy[0]), heavy[0])


def _anchor_pattern(anchor: Node) -> str:
    if anchor.op == "conv2d" and anchor.attr("groups", 1) != 1:
        return "conv"
    return PATTERN_OF_OP[anchor.op]


def _fused_views(general: list[Node], heavy: list[Node]) -> bool:
    """Whether the only general-only nodes are views around one anchor whose family re-addresses
    views in its fused prologue and epilogue."""
    return (len(heavy) == 1 and heavy[0].op in PATTERN_OF_OP and _anchor_pattern(heavy[0]) in VIEW_FUSING
            and all(n.op in VIEWS for n in general))
