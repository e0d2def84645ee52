"""Fused elementwise code and kernel signatures for the memory-bound sketches: the compute
type of an expression, its inputs, loaded elements as values, scalar code through `expr.emit`
(prologues, epilogues, maps), kernel parameter lists, and names a tensor must not take.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from ..ir.dtypes import DType
from ..ir.graph import Node, Shape
from ..ir.patterns import Problem
from .base import Param, load_as_compute
from .expr import Emitted, emit

def expression_ctype(root: Node, stop: Node | None = None) -> str:
    """The C type an elementwise expression computes in: double if anything is f64, else float
    if anything is floating, else the widest integer (nodes below `stop` are not looked at)."""
    # Python scalars are weakly typed (an int literal must not widen i32 math to 64 bits).
    dtypes = [n.dtype for n in _walk_until(root, stop) if n.op != "const"]
    if any(d.name == "f64" for d in dtypes):
        return "double"
    if any(d.is_float for d in dtypes):
        return "float"
    return "long long" if any(d.name == "i64" for d in dtypes) else "int"

def _walk_until(root: Node, stop: Node | None) -> list[Node]:
    out, seen, stack = [], set(), [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        if n is not stop:
            stack.extend(n.args)
    return out

def input_nodes(root: Node, stop: Node | None = None) -> list[Node]:
    """The input nodes of `root`, not looking below `stop`, one per name, in first-use order."""
    names: dict[str, Node] = {}
    for n in root.walk() if stop is None else _walk_until(root, stop):
        if n.op == "input" and n.name not in names and (stop is None or n is not stop):
            names[n.name] = n
    return list(names.values())

def leaf_value(dtype: DType, raw: str, ctype: str) -> str:
    """A loaded element `raw` of `dtype` as a value of the compute type `ctype`."""
    if dtype.is_low_precision:
        value = load_as_compute(dtype, raw)
        return value if ctype == "float" else f"({ctype}){value}"
    return raw if dtype.c_type == ctype else f"({ctype}){raw}"

def emit_expression(root: Node, raw_inputs: dict[str, str], ctype: str, *,
                    anchor: Node | None = None, anchor_value: str | None = None,
                    prefix: str = "expr_") -> Emitted:
    """Scalar code for `root` given each input's raw loaded element (by input name) and, for an
    epilogue, the C expression of the anchor's value (already in `ctype`)."""
    leaves: dict[int, str] = {}
    if anchor is not None:
        leaves[id(anchor)] = anchor_value or ""
        # Nodes only below the anchor are not epilogue code: make them opaque leaves.
        reachable = {id(n) for n in _walk_until(root, anchor)}
        leaves.update({id(n): "" for n in root.walk() if id(n) not in reachable})
    for n in (root.walk() if anchor is None else _walk_until(root, anchor)):
        if n.op == "input" and id(n) not in leaves:
            leaves[id(n)] = leaf_value(n.dtype, raw_inputs[n.name], ctype)
    return emit(root, leaves, ctype, prefix)


# ---------------------------------------------------------------------------------------------
# Signatures and names

def kernel_param_list(params: Sequence[Param]) -> list[str]:
    """Kernel parameters matching the launcher's: restrict pointers, then `long long` symbols."""
    return [f"{p.c_type} __restrict__ {p.name}" if p.role != "symbol" else f"long long {p.name}"
            for p in params]

def shape_text(shape: Shape) -> str:
    return " x ".join(str(d) for d in shape) if shape else "1"

def describe(problem: Problem) -> str:
    """The intent's computation on one line, for the kernel's comment."""
    program = problem.program
    first = program.text.strip().splitlines()[0] if program.text.strip() else ""
    first = first.rstrip("\\ ")   # a trailing backslash would continue the // comment
    return first or f"{program.output_name} = {problem.output!r}"

# Names every memory-bound region declares (helpers, launcher locals) or that C++/CUDA own; each
# family adds the locals of its own kernels. Kernel parameters carry the intent's names.
COMMON_NAMES = frozenset("""
    ArgPair Compensated Combine MaxOp SumOp MaxSum MergeMaxSum Welford MergeWelford Pack load_pack store_pack
    shfl_down shfl_idx group_reduce online_add welford_add welford_add_pack workspace
    kn stream packed aligned grid blocks block
    threadIdx blockIdx blockDim gridDim warpSize dim3 auto bool break case char const continue default
    do double else enum extern false float for goto if inline int long namespace new operator private
    public register return short signed sizeof static struct switch template this true typedef union
    unsigned void volatile while
""".split())

_GENERATED = re.compile(r"(k[A-Z]\w*|(pro|epi|expr_|val_)\d+|\w+_(pack|first))$")


def axis_unsupported(problem: Problem, locals_: frozenset[str], plan_of: Callable[[Problem], Any],
                     last_axis: bool | None = None, otherwise: str = "") -> str | None:
    """Why a sketch of a reduced axis cannot serve `problem`: a name clash with its `locals_`,
    the refusal `plan_of` returns (a str), or `otherwise` when the plan's axis is innermost and
    the sketch is not for that (`last_axis`; None: either axis)."""
    if why := name_clash(problem, locals_):
        return why
    p = plan_of(problem)
    if isinstance(p, str):
        return p
    return None if last_axis is None or p.view.last_axis == last_axis else otherwise


def name_clash(problem: Problem, locals_: frozenset[str]) -> str | None:
    """Why a tensor or symbol name cannot be a kernel parameter next to `locals_`, or None."""
    program = problem.program
    for name in [*program.inputs, program.output_name, *program.symbol_names()]:
        if name in COMMON_NAMES or name in locals_ or _GENERATED.match(name):
            return f"the name '{name}' is used by the generated kernel itself; rename the tensor or symbol"
    return None
