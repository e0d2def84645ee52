"""Kernel plans → CUDA through the engine's public API, splitting a fusion a sketch refuses.

Each plan becomes an IR `Program` served by `CUDAGenerator.generate_program`. When no sketch
takes a fused plan (a GEMM with a prologue, a convolution with a broadcast epilogue, ...), the
plan is split and each part served on its own: first its anchor's computed operands are written
to memory, then the epilogue is cut as high as a sketch allows (tried from the root down), all
that is above the cut becoming one elementwise kernel. The report says what was fused.
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
        refusal = e
    parts = _split_prologue(plan, lowered)
    if parts is None:
        return _cut_epilogue(plan, lowered, generator, index, refusal)
    out: list[ServedKernel] = []
    for part in parts:
        out += _serve_plan(part, lowered, generator, index + len(out))
    return out


def _cut_epilogue(
    plan: KernelPlan, lowered: Lowered, generator: CUDAGenerator, index: int, refusal: GenerationError
) -> list[ServedKernel]:
    """The anchor's kernel takes as much of the epilogue as a sketch accepts (tried from the
    root down); everything above the cut becomes one elementwise kernel."""
    heavy = heavy_in(plan.expr)
    if heavy and heavy[0].op in HEAVY and plan.expr is not heavy[0]:
        anchor = heavy[0]
        spine = [n for n in plan.expr.walk() if n is not plan.expr and any(m is anchor for m in n.walk())]
        for cut in reversed(spine):  # nearest the root first
            leaf = lowered.temp(cut.dtype, tuple(int(d) for d in cut.shape))
            head = KernelPlan(lowered.buffers[leaf.name], cut, plan.origins)
            program, inputs, name = _program(head, lowered, index)
            try:
                served = ServedKernel(name, head, inputs, generator.generate_program(program))
            except GenerationError:
                continue
            rest = KernelPlan(plan.out, substitute(plan.expr, {id(cut): leaf}, plan.origins), plan.origins)
            return [served, *_serve_plan(rest, lowered, generator, index + 1)]
    ops = plan.operations()
    op = " + ".join(o.op for o in ops) or "copy"
    line = next((o.line for o in ops if o.line is not None), None)
    raise Unmapped(op, line, lowered.traced.source_line(line), str(refusal)) from None


def _program(plan: KernelPlan, lowered: Lowered, index: int) -> tuple[Program, list[Buffer], str]:
    leaves = plan.leaves()
    inputs = [lowered.buffers[n.name] for n in leaves]
    anchor = heavy_in(plan.expr)
    name = f"k{index}_{anchor[0].op if anchor else 'map'}"
    decls = {b.name: TensorDecl(b.name, b.dtype, b.shape) for b in inputs}
    text = f"{plan.out.name} = {plan.expr!r}"
    program = Program(decls, plan.out.name, plan.expr, {}, {"name": name}, text)
    return program, inputs, name


def _split_prologue(plan: KernelPlan, lowered: Lowered) -> list[KernelPlan] | None:
    """The anchor's computed operands as kernels of their own, then the plan over them; None
    when the anchor reads only buffers."""
    heavy = heavy_in(plan.expr)
    if not heavy:
        return None
    anchor = heavy[0]
    computed = [a for a in anchor.args if a.op not in ("input", "const") and not is_layout_view(a, anchor)]
    if not computed:
        return None
    parts: list[KernelPlan] = []
    replace: dict[int, Node] = {}
    for node in computed:
        leaf = lowered.temp(node.dtype, tuple(int(d) for d in node.shape))
        parts.append(KernelPlan(lowered.buffers[leaf.name], node, plan.origins))
        replace[id(node)] = leaf
    rest = substitute(plan.expr, replace, plan.origins)
    return parts + [KernelPlan(plan.out, rest, plan.origins)]
