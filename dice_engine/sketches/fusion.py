"""What the transpose, scan, conv and pool sketches share: fused elementwise prologues and
epilogues (the anchor's operand computed from inputs, the output computed from the anchor),
kernel signatures mirroring the launcher, and vector packs.

Both are read element by element at one linear offset, so every tensor they touch must have
the shape of the element being produced (the anchor's operand, or the output) or be rank 0.
Broadcast operands would need per-family index math and are refused with a reason.
"""
from __future__ import annotations

from dataclasses import replace

from typing import Callable

from ..ir.graph import Node
from ..ir.patterns import Problem
from .base import launcher_params, load_as_compute, store_from_compute
from .expr import Emitted, emit

ANCHOR_LEAF = "__anchor__"


def expression_ctype(root: Node) -> str:
    """The C type an elementwise expression computes in: the widest dtype among its tensors
    (Python scalars are weak and never widen it)."""
    names = {n.dtype.name for n in root.walk() if n.op != "const"}
    if "f64" in names:
        return "double"
    if names & {"f32", "f16", "bf16"}:
        return "float"
    if "i64" in names:
        return "long long"
    return "int"


def epilogue_root(problem: Problem) -> Node:
    """The output expression with the anchor replaced by a placeholder input, so that nothing
    under the anchor is reachable from it."""
    anchor = problem.anchor
    assert anchor is not None
    memo: dict[int, Node] = {}

    def rebuild(node: Node) -> Node:
        if node is anchor:
            return Node("input", (), anchor.dtype, anchor.shape, name=ANCHOR_LEAF)
        if id(node) not in memo:
            memo[id(node)] = replace(node, args=tuple(rebuild(a) for a in node.args))
        return memo[id(node)]

    return rebuild(problem.output)


def has_epilogue(problem: Problem) -> bool:
    return problem.output is not problem.anchor


def has_prologue(problem: Problem, arg_index: int = 0) -> bool:
    assert problem.anchor is not None
    return problem.anchor.args[arg_index].op != "input"


def _unsupported_in(root: Node, shape: tuple, where: str) -> str | None:
    ctype = expression_ctype(root)
    for node in root.walk():
        if node.op == "input" and node.name != ANCHOR_LEAF and node.shape not in (shape, ()):
            return (f"input '{node.name}' {list(node.shape)} broadcasts in the fused {where}; "
                    f"only operands shaped {list(shape)} (or scalars) can be fused here")
        if node.op == "cast" and node is not root and ctype in ("float", "double") \
                and not node.dtype.is_float:
            return f"a cast to {node.dtype} inside a floating fused {where} is not supported"
    return None


def fusion_unsupported(problem: Problem, operands: tuple[int, ...] = (0,)) -> str | None:
    """Why the prologue (on the listed anchor operands) or the epilogue cannot be fused."""
    anchor = problem.anchor
    assert anchor is not None
    for i in operands:
        if why := _unsupported_in(anchor.args[i], anchor.args[i].shape, "prologue"):
            return why
    return _unsupported_in(epilogue_root(problem), problem.output.shape, "epilogue")


Reader = Callable[[Node], str]   # an input node → C expression of its element (storage type)


def read_at(offset: str) -> Reader:
    """Read every fused input at linear element `offset` (rank-0 inputs at element 0)."""
    return lambda node: f"{node.name}[{'0' if node.shape == () else offset}]"


def _input_leaves(root: Node, read: Reader) -> dict[int, str]:
    return {id(n): load_as_compute(n.dtype, read(n)) for n in root.walk()
            if n.op == "input" and n.name != ANCHOR_LEAF}


def operand_inputs(problem: Problem, arg_index: int = 0) -> list[Node]:
    """The distinct input nodes the anchor's operand `arg_index` reads."""
    assert problem.anchor is not None
    return [n for n in problem.anchor.args[arg_index].walk() if n.op == "input"]


def operand_value(problem: Problem, read: Reader, arg_index: int = 0, prefix: str = "pro") -> Emitted:
    """The anchor's operand `arg_index` (compute type), its inputs read through `read`."""
    assert problem.anchor is not None
    root = problem.anchor.args[arg_index]
    return emit(root, _input_leaves(root, read), expression_ctype(root), prefix)


def epilogue_value(problem: Problem, anchor_value: str, read: Reader, prefix: str = "epi") -> Emitted:
    """The output given the anchor's value (compute type), the other inputs read through `read`."""
    root = epilogue_root(problem)
    leaves = _input_leaves(root, read)
    leaves.update({id(n): anchor_value for n in root.walk() if n.name == ANCHOR_LEAF})
    return emit(root, leaves, expression_ctype(root), prefix)


def epilogue_inputs(problem: Problem) -> list[Node]:
    """The distinct input nodes the epilogue reads besides the anchor."""
    return [n for n in epilogue_root(problem).walk() if n.op == "input" and n.name != ANCHOR_LEAF]


def kernel_params(problem: Problem) -> str:
    """A kernel's parameter list mirroring the launcher's (inputs, output, symbols), with the
    pointers marked __restrict__ (the output never aliases an input)."""
    return ", ".join(f"{p.c_type} __restrict__ {p.name}" if p.role != "symbol" else f"{p.c_type} {p.name}"
                     for p in launcher_params(problem))


def kernel_args(problem: Problem) -> str:
    return ", ".join(p.name for p in launcher_params(problem))


def block(statements: list[str], indent: str) -> str:
    """Emitted statements as indented lines (empty when there are none)."""
    return "".join(f"{indent}{s}\n" for s in statements)


# ---------------------------------------------------------------------------------------------
# Vector (Pack) access to the fused tensors

PACK = """\
// A run of N elements moved as one vector access (the address must be N-element aligned).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
    T v[N];
};"""


def _pack_loads(problem: Problem, nodes: list[Node], vec: int, offset: str, indent: str, tag: str) -> str:
    """Vector loads of `vec` elements at `offset` of each (non-scalar) input, as `<name>_<tag>`
    (the tag keeps an input read by both the prologue and the epilogue from being declared twice)."""
    lines = []
    for name in sorted({n.name for n in nodes if n.shape != ()}):
        t = problem.program.inputs[name].dtype.c_type
        lines.append(f"{indent}const Pack<{t}, {vec}> {name}_{tag} = "
                     f"*reinterpret_cast<const Pack<{t}, {vec}>*>({name} + {offset});\n")
    return "".join(lines)


def _pack_reader(k: int, tag: str) -> Reader:
    return lambda node: f"{node.name}[0]" if node.shape == () else f"{node.name}_{tag}.v[{k}]"


def load_operand(problem: Problem, offset: str, vec: int, indent: str,
                 arg_index: int = 0) -> tuple[str, list[str]]:
    """Code that reads `vec` consecutive elements of the anchor's operand at `offset` (vector
    loads of every input it reads, then the prologue per element), and their C expressions in
    the operand's compute type. With vec == 1 the inputs are read in place."""
    if vec == 1:
        value = operand_value(problem, read_at(offset), arg_index, prefix="pro_")
        return block(value.statements, indent), [value.value]
    code = _pack_loads(problem, operand_inputs(problem, arg_index), vec, offset, indent, "pack")
    values = []
    for k in range(vec):
        value = operand_value(problem, _pack_reader(k, "pack"), arg_index, prefix=f"pro{k}_")
        code += block(value.statements, indent)
        values.append(value.value)
    return code, values


def store_output(problem: Problem, offset: str, anchor_values: list[str], indent: str) -> str:
    """Code that writes len(anchor_values) consecutive output elements at `offset` (one vector
    store when more than one), applying the epilogue to each anchor value (compute type)."""
    vec = len(anchor_values)
    out = problem.output.dtype
    name = problem.program.output_name
    if vec == 1:
        value = epilogue_value(problem, anchor_values[0], read_at(offset), prefix="epi_")
        return (block(value.statements, indent)
                + f"{indent}{name}[{offset}] = {store_from_compute(out, value.value)};\n")
    code = _pack_loads(problem, epilogue_inputs(problem), vec, offset, indent, "out_pack")
    code += f"{indent}Pack<{out.c_type}, {vec}> result;\n"
    for k, anchor_value in enumerate(anchor_values):
        value = epilogue_value(problem, anchor_value, _pack_reader(k, "out_pack"), prefix=f"epi{k}_")
        code += block(value.statements, indent)
        code += f"{indent}result.v[{k}] = {store_from_compute(out, value.value)};\n"
    return code + f"{indent}*reinterpret_cast<Pack<{out.c_type}, {vec}>*>({name} + {offset}) = result;\n"


def widest_bytes(problem: Problem, arg_index: int = 0) -> int:
    """The widest element among the tensors moved element-wise (bounds vector widths)."""
    nodes = [problem.output, *operand_inputs(problem, arg_index), *epilogue_inputs(problem)]
    return max(n.dtype.size for n in nodes)


def fusion_note(problem: Problem, arg_index: int = 0) -> str:
    """' with fused prologue and epilogue' (or the part that applies) for header comments."""
    parts = [p for p, present in (("prologue", has_prologue(problem, arg_index)),
                                  ("epilogue", has_epilogue(problem))) if present]
    return (" with fused " + " and ".join(parts)) if parts else ""
