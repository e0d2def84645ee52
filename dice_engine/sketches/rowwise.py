"""Row-wise fused operators (softmax along an axis, norms over the last axis): the plan shared
by their sketches (view, compute type, prologue on the argument, epilogue on the result, which
pointers must be aligned for packs) and the shared-memory row cache.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..ir.graph import Node
from ..ir.patterns import Problem
from .access import Access, AxisView, axis_view, broadcast_offset, paren, plan_access
from .base import Point, store_from_compute
from .operands import emit_expression, expression_ctype, input_nodes
from .warp import pack_width

@dataclass
class RowwisePlan:
    """An operator mapping each row of its argument to a row of the output (softmax along an
    axis, a norm over the last axis), with a fused elementwise prologue and epilogue."""
    problem: Problem
    anchor: Node
    arg: Node
    view: AxisView
    ctype: str                # what the operator computes in (float; double for f64)
    prologue_ctype: str
    epilogue_ctype: str

    def accesses(self, vec: int) -> list[Access]:
        return [plan_access(n, self.arg.shape, vec) for n in input_nodes(self.arg)]

    def vec_width(self) -> int:
        dtypes = [n.dtype for n in input_nodes(self.arg)] + [self.problem.output.dtype]
        return pack_width(dtypes)

    def value_code(self, raw: dict[str, str], var: str) -> str:
        """Statements defining `const ctype var`: the argument's element from raw loads."""
        emitted = emit_expression(self.arg, raw, self.prologue_ctype, prefix=f"{var}_")
        value = emitted.value if self.prologue_ctype == self.ctype else f"({self.ctype})({emitted.value})"
        return "\n".join(emitted.statements + [f"const {self.ctype} {var} = {value};"])

    def store_code(self, value: str, out_index: str, target: str) -> str:
        """Statements writing the output element at linear `out_index` into `target`, given
        the operator's value there (a C expression in `ctype`)."""
        out = self.problem.output
        raw = {n.name: f"{n.name}[{broadcast_offset(n.shape, out.shape, out_index)}]"
               for n in input_nodes(out, stop=self.anchor)}
        anchor_value = value if self.ctype == self.epilogue_ctype else f"({self.epilogue_ctype})({value})"
        emitted = emit_expression(out, raw, self.epilogue_ctype, anchor=self.anchor,
                                  anchor_value=anchor_value, prefix="epi")
        return "\n".join(emitted.statements + [f"{target} = {store_from_compute(out.dtype, emitted.value)};"])

    def packed_check(self, vec: int, extent: str) -> str:
        """The launcher's condition for 16-byte packs: the packed extent a multiple of `vec`
        and every packed pointer (inputs read as packs, the output) 16-byte aligned."""
        if vec == 1:
            return "true"
        pointers = [a.name for a in self.accesses(vec) if a.packed] + [self.problem.program.output_name]
        addr = " | ".join(f"reinterpret_cast<uintptr_t>({n})" for n in pointers)
        return f"{paren(extent)} % {vec} == 0 && (({addr}) % 16) == 0"

def rowwise_plan(problem: Problem, dims: Sequence[int]) -> RowwisePlan | str:
    """The plan of a row-wise operator over `dims` of its first argument, or why none."""
    anchor = problem.anchor
    assert anchor is not None
    arg = anchor.args[0]
    view = axis_view(arg.shape, dims)
    if view is None:
        return "the axes are not adjacent"
    if tuple(problem.output.shape) != tuple(anchor.shape):
        return "the epilogue changes the shape of the result"
    ctype = "double" if anchor.dtype.name == "f64" else "float"
    return RowwisePlan(problem, anchor, arg, view, ctype, expression_ctype(arg),
                       expression_ctype(problem.output, stop=anchor))


# ---------------------------------------------------------------------------------------------
# A shared-memory row cache (rows too long for registers)

def row_cache_bytes(p: RowwisePlan, point: Point) -> int:
    """Dynamic shared memory for caching each of the block's rows (known row length)."""
    rows_per_block = point["threads"] // point["group"]
    return rows_per_block * (p.view.reduced_int or 0) * (8 if p.ctype == "double" else 4)

def row_cache_declaration(p: RowwisePlan) -> str:
    return (f"    extern __shared__ __align__(32) unsigned char row_cache_bytes[];\n"
            f"    {p.ctype}* const row_cache = reinterpret_cast<{p.ctype}*>(row_cache_bytes) +\n"
            f"                            (threadIdx.x / kGroup) * {p.view.reduced};   // this group's row\n")
