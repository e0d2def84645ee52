"""A program as an ordered list of stages, one kernel each.

Every heavy primitive (reduction, scan, matmul, convolution, pool) is materialised by its own
stage; elementwise work and views are never materialised: they are recomputed inside whichever
stage reads them (fusion into the consumer). The output is written by a final map stage, or,
when the output is an elementwise function of the last heavy node at the same index, by that
node's stage directly (fusion into the producer: `epilogue_of` is then that node).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..ir.graph import Node, Program
from ..ir.ops import ELEMENTWISE, STATISTICS, VIEWS
from .expand import COMPOSITE, expand, two_pass
from .stages import MATERIALISED, Stage, stage_for

LOWERABLE = ELEMENTWISE | VIEWS | MATERIALISED | COMPOSITE | {"permute", "input", "const"}


@dataclass
class Plan:
    root: Node                      # the output expression, composites expanded
    stages: list[Stage]             # launch order; the last one writes the output
    epilogue_of: Node | None        # the last stage's node when the output epilogue is fused into it

    @property
    def workspace(self) -> list[Node]:
        """Nodes written to launcher-owned workspace (every stage's but the last)."""
        return [s.node for s in self.stages[:-1]]


def unlowerable(root: Node) -> str | None:
    """Why the lowering cannot express `root`, or None."""
    bad = sorted({n.op for n in root.walk() if n.op not in LOWERABLE})
    return f"no general lowering for operator(s) {', '.join(bad)}" if bad else None


def _fusable_epilogue(root: Node, heavy: Node) -> bool:
    """The output reads `heavy` only at its own index, through elementwise operators."""
    if heavy.shape != root.shape:
        return False
    reaches: dict[int, bool] = {}
    for node in root.walk():
        if node is heavy:
            reaches[id(node)] = True
            continue
        if node.op in MATERIALISED:
            reaches[id(node)] = False
            continue
        reaches[id(node)] = any(reaches[id(a)] for a in node.args)
        if reaches[id(node)] and (node.op not in ELEMENTWISE or node.shape != root.shape):
            return False
    return reaches.get(id(root), False)


def _computed(node: Node) -> bool:
    """Whether `node` costs arithmetic to produce (not just an input re-addressed by views)."""
    if node.op in ("input", "const", "index") or node.op in MATERIALISED:
        return False
    if node.op in VIEWS or node.op == "permute":
        return any(_computed(a) for a in node.args)
    return True


def _operands_to_materialise(root: Node) -> set[int]:
    """Computed operands of matmuls and convolutions: each of their elements is read by many
    outputs, so it is computed once into workspace rather than once per read."""
    return {id(a) for n in root.walk() if n.op == "matmul" or n.op.startswith("conv")
            for a in n.args if _computed(a)}


def make_plan(output: Node, *, statistics_in_turn: bool = False) -> Plan:
    """The stages of `output`; with `statistics_in_turn`, a mean and variance taken from one
    `moments` become two reductions (`expand.two_pass`), the form the one-kernel normalisation
    computes."""
    root = expand(output)
    if statistics_in_turn:
        root = two_pass(root)
    operands = _operands_to_materialise(root)
    heavy = [n for n in root.walk() if n.op in MATERIALISED or id(n) in operands]
    stages = [stage_for(n) for n in heavy]
    if heavy and heavy[-1] is root:
        return Plan(root, stages, None)
    # a moments stage writes its two halves itself: work on them runs in a map stage after it
    if heavy and heavy[-1].op not in STATISTICS and _fusable_epilogue(root, heavy[-1]):
        return Plan(root, stages, heavy[-1])
    return Plan(root, stages + [stage_for(root)], None)


def block_fusable(plan: Plan) -> bool:
    """Whether the whole plan fits one block-per-group kernel (a normalisation): every stage but
    the last is a floating reduction with kept dims over the same axes of same-shaped operands,
    and the last is a map over that shape, reading the reductions broadcast back."""
    *stats, last = plan.stages
    if not stats or last.combine is not None or plan.epilogue_of is not None:
        return False
    first = stats[0].node
    for stage in stats:
        node = stage.node
        if (node.op not in ("sum", "mean", "max", "min", "prod") or not node.attr("keepdim")
                or not node.dtype.is_float or node.attr("dim") != first.attr("dim")
                or node.args[0].shape != first.args[0].shape):
            return False
    return last.node.shape == first.args[0].shape


def fused_plan(output: Node) -> Plan | None:
    """The plan of the one-kernel normalisation, or None where `output` is not one."""
    plan = make_plan(output, statistics_in_turn=True)
    return plan if block_fusable(plan) else None


MAX_THREAD_GROUP = 4096     # longest group a thread reduces alone (serial fp32 sums stay short)
REGISTER_GROUP = 64         # longest group a thread keeps in registers between its passes


def thread_fusable(plan: Plan, program: Program) -> bool:
    """Whether the one-kernel normalisation can give each group to one thread: the argument's
    last (contiguous) axis is kept, so consecutive threads take consecutive groups and every
    pass over the groups is a coalesced sweep (RMS over the channels of NCHW), and the groups
    are short enough for a serial sum."""
    first = plan.stages[0]
    if first.node.args[0].rank - 1 in first.node.attr("dim"):
        return False
    return math.prod(program.concrete_shape(first.extents)) <= MAX_THREAD_GROUP


def held_in_registers(plan: Plan, program: Program) -> bool:
    """Whether the thread-per-group form keeps its group in registers: a short group of
    concrete size (its loop fully unrolled, so the array indices are constants)."""
    extents = plan.stages[0].extents
    return (all(isinstance(d, int) for d in extents) and thread_fusable(plan, program)
            and math.prod(extents) <= REGISTER_GROUP)
