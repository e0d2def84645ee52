"""Kernel plans → CUDA through the engine's public API, splitting a fusion a sketch refuses.

Each plan becomes an IR `Program` served by `CUDAGenerator.generate_program`. When no sketch
takes a fused plan (a GEMM with a prologue, a convolution with a broadcast epilogue, ...), the
plan is split and each part served on its own: first its anchor's computed operands are written
to memory, then the epilogue is cut, one level at a time, until the anchor's kernel takes what
remains above it. The report says what was fused.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..api import CUDAGenerator, GenerationError, GenerationResult
from ..ir.graph import Node, Program, TensorDecl
from ..ir.ops import HEAVY
from .lower import Lowered, Unmapped
from .plan import Buffer, KernelPlan, heavy_in, is_layout_view, substitute


@dataclass
class ServedKernel:
    name: str  # kernel name; the launcher is `<name>_launch`
    plan: KernelPlan
    inputs: list[Buffer]  # the launcher's input pointers, in order (then the output, then the stream)
    result: GenerationResult

    @property
    def fused(self) -> list[str]:
        """The traced operations this kernel computes ("aten.conv2d + aten.relu")."""
        return [o.op for o in self.plan.operations()]


def serve(lowered: Lowered, generator: CUDAGenerator) -> list[ServedKernel]:
    served: list[ServedKernel] = []
    for plan in lowered.plans:
        served += _serve_plan(plan, lowered, generator, len(served))
    return served


def _serve_plan(
    plan: KernelPlan, lowered: Lowered, generator: CUDAGenerator, index: int
) -> list[ServedKernel]:
    program, inputs, name = _program(plan, lowered, index)
    try:
        return [ServedKernel(name, plan, inputs, generator.generate_program(program))]
    except GenerationError as e:
        parts = _split(plan, lowered)
        if parts is None:
            ops = plan.operations()
            op = " + ".join(o.op for o in ops) or "copy"
            line = next((o.line for o in ops if o.line is not None), None)
            raise Unmapped(op, line, lowered.traced.source_line(line), str(e)) from None
    out: list[ServedKernel] = []
    for part in parts:
        out += _serve_plan(part, lowered, generator, index + len(out))
    return out


def _program(plan: KernelPlan, lowered: Lowered, index: int) -> tuple[Program, list[Buffer], str]:
    leaves = plan.leaves()
    inputs = [lowered.buffers[n.name] for n in leaves]
    anchor = heavy_in(plan.expr)
    name = f"k{index}_{anchor[0].op if anchor else 'map'}"
    decls = {b.name: TensorDecl(b.name, b.dtype, b.shape) for b in inputs}
    text = f"{plan.out.name} = {plan.expr!r}"
    program = Program(decls, plan.out.name, plan.expr, {}, {"name": name}, text)
    return program, inputs, name


def _split(plan: KernelPlan, lowered: Lowered) -> list[KernelPlan] | None:
    """The plan as two or more plans that fuse less, or None when it is one operator already.
    First the anchor's computed operands are written by kernels of their own; then the epilogue
    is cut one level below its root (the anchor with the rest of its epilogue stays one kernel,
    and a refusal of that cuts again, down to the anchor alone)."""
    heavy = heavy_in(plan.expr)
    if not heavy:
        return None
    anchor = heavy[0]
    computed = [a for a in anchor.args if a.op not in ("input", "const") and not is_layout_view(a, anchor)]
    if computed:
        cut = computed
    elif plan.expr is not anchor and anchor.op in HEAVY:
        holders = [a for a in plan.expr.args if any(n is anchor for n in a.walk())]
        cut = holders if len(holders) == 1 else [anchor]
    else:
        return None
    parts: list[KernelPlan] = []
    replace: dict[int, Node] = {}
    for node in cut:
        leaf = lowered.temp(node.dtype, tuple(int(d) for d in node.shape))
        parts.append(KernelPlan(lowered.buffers[leaf.name], node, plan.origins))
        replace[id(node)] = leaf
    rest = substitute(plan.expr, replace, plan.origins)
    return parts + [KernelPlan(plan.out, rest, plan.origins)]
