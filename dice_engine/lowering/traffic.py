"""A plan's DRAM traffic at the hint sizes, for the cost model: every stage reads the tensors
its fused expressions touch and writes its result, so a plan of several kernels moves more than
the problem's minimum. Two modelled losses on top:

- a per-thread serial loop that walks a tensor's contiguous axis (the `thread` schedule over a
  last-axis reduction) uses one 4-byte word of each 32-byte sector it fetches per pass;
- the general kernels issue scalar accesses, which reach a lower fraction of DRAM bandwidth than
  the 16-byte vector accesses of the hand-written families (SCALAR_ACCESS_EFFICIENCY);
- consecutive threads take consecutive output elements, so a tensor read through a permute that
  moves its contiguous axis away from the output's (a transpose) is read a sector per element;
- a matmul or convolution stage re-reads its operands: a thread (warp, block) per output reads
  about one operand element per product from cache, the shared-memory tiled schedule stages
  2·tile·K elements per (padded) tile, each serving a whole tile row or column. Those re-reads are
  served by L2/L1, priced at L2_SPEEDUP times DRAM bandwidth.
"""
from __future__ import annotations

from ..ir.graph import Node, Program
from ..ir.ops import CONVS, REDUCTIONS
from .plan import Plan
from .stages import MATERIALISED, Stage
from .tiled import dims

SCALAR_ACCESS_EFFICIENCY = 0.8
SECTOR_BYTES = 32
L2_SPEEDUP = 3.0                  # cache bandwidth as a multiple of DRAM bandwidth


def gemm_extents(stage: Stage, program: Program) -> tuple[int, int, int]:
    """(M, N, K) of a contraction stage at the hint sizes."""
    batch, m, n = dims(stage)
    shape = program.concrete_shape(stage.node.shape)
    rows = 1
    for d in m:
        rows *= shape[d]
    return rows, shape[n], _extent(program, stage)


def _extent(program: Program, stage: Stage) -> int:
    k = 1
    for d in program.concrete_shape(tuple(stage.extents)):
        k *= d
    return k


def _operand_rereads(stage: Stage, program: Program, schedule: str, tile: int, ctype_bytes: int) -> float:
    """Bytes a matmul/convolution stage reads from cache beyond its operands' first read."""
    if stage.node.op != "matmul" and stage.node.op not in CONVS:
        return 0.0
    k = _extent(program, stage)
    if schedule == "tiled":   # each block stages tile rows of both operands per step of K
        m, n, _ = gemm_extents(stage, program)
        batch = _numel(program, stage.node) // max(1, m * n)
        staged = batch * -(-m // tile) * -(-n // tile) * 2 * tile * k
    else:
        staged = _numel(program, stage.node) * k
    return staged * ctype_bytes / L2_SPEEDUP


def _numel(program: Program, node: Node) -> int:
    n = 1
    for d in program.concrete_shape(node.shape):
        n *= d
    return n


def _moves_contiguous_axis(node: Node) -> bool:
    """A permute after which the output's last (contiguous) axis is not the argument's."""
    return node.op == "permute" and node.attr("dims")[-1] != node.rank - 1


def _leaves(root: Node, materialised: set[int]) -> list[tuple[Node, bool]]:
    """Inputs and materialised nodes `root`'s fused expression reads, each with whether it is
    read across its contiguous axis (through a transposing permute)."""
    out: list[tuple[Node, bool]] = []
    seen: set[tuple[int, bool]] = set()
    stack = [(a, False) for a in root.args] if id(root) in materialised else [(root, False)]
    while stack:
        node, strided = stack.pop()
        if (id(node), strided) in seen:
            continue
        seen.add((id(node), strided))
        if node.op == "input" or id(node) in materialised:
            out.append((node, strided))
        else:
            strided = strided or _moves_contiguous_axis(node)
            stack.extend((a, strided) for a in node.args)
    return out


def _walks_contiguous_axis(stage: Stage) -> bool:
    """A reduction whose innermost reduced axis is its argument's last (contiguous) axis."""
    dims = stage.node.attr("dim")
    return bool(dims) and stage.node.args[0].rank - 1 in dims


def plan_bytes(plan: Plan, program: Program, schedules: list[str], ctype_bytes: int, tile: int = 0) -> float:
    materialised = {id(s.node) for s in plan.stages[:-1]} | {
        id(s.node) for s in plan.stages if s.node.op in MATERIALISED}
    total = 0.0
    for stage, schedule in zip(plan.stages, schedules):
        reads = 0.0
        roots = [stage.node] + ([plan.root] if plan.epilogue_of is stage.node else [])
        leaves = {(id(n), strided): (n, strided) for r in roots for n, strided in _leaves(r, materialised)}
        for leaf, strided in leaves.values():
            size = leaf.dtype.size if leaf.op == "input" else ctype_bytes
            reads += _numel(program, leaf) * size * (SECTOR_BYTES / size if strided else 1)
        if schedule == "thread" and stage.node.op in REDUCTIONS and _walks_contiguous_axis(stage):
            reads *= SECTOR_BYTES / max(1, stage.node.args[0].dtype.size)
        reads += _operand_rereads(stage, program, schedule, tile, ctype_bytes)
        out = plan.root if stage is plan.stages[-1] else stage.node
        total += reads + _numel(program, out) * (out.dtype.size if stage is plan.stages[-1] else ctype_bytes)
    return total / SCALAR_ACCESS_EFFICIENCY


def bytes_per_position(plan: Plan, stage: Stage, ctype_bytes: int) -> int:
    """Bytes one position of `stage`'s loop loads: an element of each tensor its term reads."""
    materialised = {id(s.node) for s in plan.stages if s is not stage}
    return sum(leaf.dtype.size if leaf.op == "input" else ctype_bytes
               for leaf, _ in _leaves(stage.node, materialised))


L1_RESIDENT_BYTES = 64 * 1024     # a group this small is re-read from the SM's cache, not DRAM


def group_fits_l1(plan: Plan, program: Program) -> bool:
    """Whether a group of the block-per-group normalisation (`plan` is its fused plan) stays in
    the SM's L1 between its passes."""
    stats = plan.stages[0].node
    return _numel(program, stats.args[0]) // max(1, _numel(program, stats)) * 4 <= L1_RESIDENT_BYTES


def fused_bytes(plan: Plan, program: Program, reads_once: bool) -> float:
    """The one-kernel normalisation: each pass over a group re-reads its inputs, unless the group
    stays on the SM between passes (`reads_once`: in L1, or in a thread's registers)."""
    stats = plan.stages[:-1]
    inputs = [n for n in plan.root.walk() if n.op == "input"]
    read = sum(_numel(program, n) * n.dtype.size for n in {id(n): n for n in inputs}.values())
    passes = 1 if reads_once else len(stats) + 1
    written = _numel(program, plan.root) * plan.root.dtype.size
    return (read * passes + written) / SCALAR_ACCESS_EFFICIENCY
