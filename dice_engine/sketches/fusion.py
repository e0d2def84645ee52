"""Fused elementwise code, in one place for every sketch: the compute type of an expression and
its inputs as values, prologues and epilogues around an anchor (same-shaped operands read at one
linear offset, or a matrix-shaped anchor's epilogue whose inputs broadcast against the output),
vector packs, kernel signatures mirroring the launcher, and names a tensor must not take.

Every input enters an expression converted to the expression's compute type (`leaf_value`), so
integer tensors divide as torch does (true division in floating point), never truncating in C.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable, Sequence

from ..ir.dtypes import DType
from ..ir.graph import Node, Shape
from ..ir.ops import VIEWS, broadcast_shapes
from ..ir.patterns import Problem
from .access import broadcast_offset
from .base import Param, compute_type, launcher_params, load_as_compute, store_from_compute
from .body import Body, Source, unravel
from .expr import Emitted, emit

Reader = Callable[[Node], str]  # an input node → C expression of its element (storage type)
Rename = Callable[[str], str]  # a tensor's name → its kernel parameter's name


# ---------------------------------------------------------------------------------------------
# Expressions


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


def emit_expression(
    root: Node,
    raw_inputs: dict[str, str],
    ctype: str,
    *,
    anchor: Node | None = None,
    anchor_value: str | None = None,
    prefix: str = "expr_",
) -> Emitted:
    """Scalar code for `root` given each input's raw loaded element (by input name) and, for an
    epilogue, the C expression of the anchor's value (already in `ctype`)."""
    leaves: dict[int, str] = {}
    if anchor is not None:
        leaves[id(anchor)] = anchor_value or ""
        # Nodes only below the anchor are not epilogue code: make them opaque leaves.
        reachable = {id(n) for n in _walk_until(root, anchor)}
        leaves.update({id(n): "" for n in root.walk() if id(n) not in reachable})
    for n in root.walk() if anchor is None else _walk_until(root, anchor):
        if n.op == "input" and id(n) not in leaves:
            leaves[id(n)] = leaf_value(n.dtype, raw_inputs[n.name], ctype)
    return emit(root, leaves, ctype, prefix)


def epilogue_nodes(output: Node, anchor: Node) -> list[Node]:
    """Nodes of the output expression reachable without passing through the matmul."""
    seen: set[int] = set()
    found: list[Node] = []
    stack = [output]
    while stack:
        n = stack.pop()
        if id(n) in seen or n is anchor:
            continue
        seen.add(id(n))
        found.append(n)
        stack.extend(n.args)
    return found


# ---------------------------------------------------------------------------------------------
# Linear-offset prologues and epilogues (transpose, scan, conv, pool): every tensor they touch
# has the shape of the element being produced (the anchor's operand, or the output), is rank 0,
# or broadcasts against it (a per-channel bias (C, 1, 1) beside an NCHW output): such an operand's
# element is found from the produced element's linear offset by division and remainder.
# A prologue or epilogue with views (a slice, pad, flip, reshape or position index: a narrowed
# row scanned, a padded plane pooled) is computed at the produced element's multi-index instead,
# through `body.Body`, which re-addresses each view's argument; its inputs are read one element
# at a time.

ANCHOR_LEAF = "__anchor__"


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


def reindexes(root: Node) -> bool:
    """Whether `root` holds a view, so its inputs are read away from the produced element."""
    return any(n.op in VIEWS for n in root.walk())


def _under_view(root: Node) -> list[Node]:
    """The nodes some view re-addresses (below a view, the view itself excluded)."""
    return [n for view in root.walk() if view.op in VIEWS for a in view.args for n in a.walk()]


def _unsupported_in(root: Node, shape: tuple, where: str) -> str | None:
    ctype = expression_ctype(root)
    if any(n.name == ANCHOR_LEAF for n in _under_view(root)):
        return (f"the fused {where} re-addresses the anchor's result through a view "
                "(only its own element is at hand)")
    free = reindexes(root)   # views re-address their inputs; any well-formed operand is readable
    for node in root.walk():
        if (node.op == "input" and node.name != ANCHOR_LEAF and not free
                and broadcast_shapes(node.shape, shape) != shape):
            return (
                f"input '{node.name}' {list(node.shape)} does not broadcast against {list(shape)} "
                f"in the fused {where}"
            )
        if (
            node.op == "cast"
            and node is not root
            and ctype in ("float", "double")
            and not node.dtype.is_float
        ):
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


def read_at(offset: str, shape: Shape) -> Reader:
    """Read every fused input at linear element `offset` of a tensor of `shape` (the one being
    read or written); inputs that broadcast against it at their own element."""
    return lambda node: f"{node.name}[{broadcast_offset(node.shape, shape, offset)}]"


def _input_leaves(root: Node, read: Reader, ctype: str) -> dict[int, str]:
    return {
        id(n): leaf_value(n.dtype, read(n), ctype)
        for n in root.walk()
        if n.op == "input" and n.name != ANCHOR_LEAF
    }


def indexed_value(root: Node, offset: str, shape: Shape, ctype: str, prefix: str,
                  anchor_value: str | None = None) -> Emitted:
    """`root` (which holds views) at linear element `offset` of the produced tensor of `shape`,
    in `ctype`; the anchor placeholder, if any, reads as `anchor_value`."""
    sources = {id(n): Source(n.name or "", "input")
               for n in root.walk() if n.op == "input" and n.name != ANCHOR_LEAF}
    body = Body(ctype if ctype in ("float", "double") else "float", sources, prefix=f"{prefix}v")
    index = unravel(offset, shape)
    for n in root.walk():
        if n.name == ANCHOR_LEAF:
            assert anchor_value is not None
            body.bind(n, index, anchor_value)
    value = body.value(root, index)
    return Emitted(body.lines, value if body.type_of(root) == ctype else f"(({ctype})({value}))")


def operand_inputs(problem: Problem, arg_index: int = 0) -> list[Node]:
    """The distinct input nodes the anchor's operand `arg_index` reads."""
    assert problem.anchor is not None
    return [n for n in problem.anchor.args[arg_index].walk() if n.op == "input"]


def operand_value(problem: Problem, read: Reader, arg_index: int = 0, prefix: str = "pro") -> Emitted:
    """The anchor's operand `arg_index` (compute type), its inputs read through `read`."""
    assert problem.anchor is not None
    root = problem.anchor.args[arg_index]
    ctype = expression_ctype(root)
    return emit(root, _input_leaves(root, read, ctype), ctype, prefix)


_ATOM = re.compile(r"[\w.\[\]]+")


def atom(value: str) -> str:
    """`value` as one operand wherever the epilogue puts it: an anchor value with a bias,
    `acc[i][j] + (Acc)(b[c])`, must not lose its sum to a product around it (`w * acc + b`)."""
    return value if _ATOM.fullmatch(value) else f"({value})"


def epilogue_value(problem: Problem, anchor_value: str, read: Reader, prefix: str = "epi") -> Emitted:
    """The output given the anchor's value (the anchor dtype's compute type), the other inputs
    read through `read`. Every leaf enters in the expression's compute type: an integer anchor or
    input divided by another must not truncate in C where torch divides truly."""
    root = epilogue_root(problem)
    ctype = expression_ctype(root)
    leaves = _input_leaves(root, read, ctype)
    anchor_ctype = compute_type(problem.output.dtype if problem.anchor is None else problem.anchor.dtype)
    value = atom(anchor_value) if anchor_ctype == ctype else f"(({ctype})({anchor_value}))"
    leaves.update({id(n): value for n in root.walk() if n.name == ANCHOR_LEAF})
    return emit(root, leaves, ctype, prefix)


def epilogue_inputs(problem: Problem) -> list[Node]:
    """The input nodes the epilogue reads besides the anchor, one per name, in declaration order."""
    assert problem.anchor is not None
    by_name = {n.name: n for n in epilogue_nodes(problem.output, problem.anchor) if n.op == "input"}
    return [by_name[name] for name in problem.program.inputs if name in by_name]


# ---------------------------------------------------------------------------------------------
# Epilogues of a matrix-shaped anchor (the GEMMs): inputs broadcast against the output


def _leaf_offset(node: Node, out_rank: int) -> str:
    """Offset of `node`'s element at output position (batch, row, col), under broadcasting.
    `node`'s non-1 extents equal the output's, so strides are products of M and N."""
    out_dims = ["", "M", "N"][-out_rank:]  # the batch extent is never a stride
    out_index = ["batch", "row", "col"][-out_rank:]
    terms: list[str] = []
    stride: list[str] = []
    for i in range(1, node.rank + 1):
        d = node.shape[-i]
        if d != 1:
            terms.append(" * ".join([f"(long long){out_index[-i]}"] + stride[::-1]))
            stride.append(out_dims[-i])
    return " + ".join(reversed(terms)) or "0"


def broadcast_epilogue(problem: Problem, ctype: str, rename: Rename) -> str:
    """`epilogue(acc, batch, row, col, ...)`: the output value (`ctype`) at one position of a
    matrix-shaped anchor, given the accumulator there; the epilogue's inputs broadcast against
    the output (their kernel parameters named by `rename`). Empty when the output is the anchor."""
    if not has_epilogue(problem):
        return ""
    anchor = problem.anchor
    assert anchor is not None
    leaves = {id(anchor): "acc"}
    for n in epilogue_inputs(problem):
        raw = f"{rename(n.name or '')}[{_leaf_offset(n, anchor.rank)}]"
        leaves[id(n)] = leaf_value(n.dtype, raw, ctype)
    for n in epilogue_nodes(problem.output, anchor):  # output positions (triu/tril masks)
        if n.op == "index":
            leaves[id(n)] = ["batch", "row", "col"][n.attr("dim") - n.rank]
    for n in anchor.walk():  # emit visits the anchor's operands; they are never read
        leaves.setdefault(id(n), "0")
    code = emit(problem.output, leaves, ctype)
    body = "\n".join(f"    {s}" for s in code.statements)
    params = ", ".join(
        f"const {n.dtype.c_type}* __restrict__ {rename(n.name or '')}" for n in epilogue_inputs(problem)
    )
    params = f", {params}" if params else ""
    doc = f"// Fused epilogue: {problem.program.output_name} = {problem.output!r}, acc = the {anchor.op}."
    return (
        f"{doc}\n__device__ __forceinline__ {ctype} epilogue({ctype} acc, long long batch, "
        f"long long row, long long col, int M, int N{params}) {{\n"
        f"{body + chr(10) if body else ''}    return {code.value};\n}}\n"
    )


def broadcast_epilogue_call(problem: Problem, acc: str, row: str, col: str, rename: Rename,
                            batch: str = "blockIdx.z") -> str:
    """C expression of the output at (batch, row, col) given the accumulator `acc`, through
    `broadcast_epilogue`'s function."""
    if not has_epilogue(problem):
        return acc
    extra = "".join(f", {rename(n.name or '')}" for n in epilogue_inputs(problem))
    return f"epilogue({acc}, {batch}, {row}, {col}, M, N{extra})"


# ---------------------------------------------------------------------------------------------
# Kernel signatures, vector (Pack) access, and names


def kernel_params(problem: Problem) -> str:
    """A kernel's parameter list mirroring the launcher's (inputs, output, symbols), with the
    pointers marked __restrict__ (the output never aliases an input)."""
    return ", ".join(
        f"{p.c_type} __restrict__ {p.name}" if p.role != "symbol" else f"{p.c_type} {p.name}"
        for p in launcher_params(problem)
    )


def kernel_args(problem: Problem) -> str:
    return ", ".join(p.name for p in launcher_params(problem))


def block(statements: list[str], indent: str) -> str:
    """Emitted statements as indented lines (empty when there are none)."""
    return "".join(f"{indent}{s}\n" for s in statements)


PACK = """\
// A run of N elements moved as one vector access (the address must be N-element aligned).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
    T v[N];
};"""


def _pack_loads(problem: Problem, nodes: list[Node], vec: int, offset: str, shape: Shape, indent: str,
                tag: str) -> str:
    """Vector loads of `vec` elements at `offset` of each input shaped `shape`, as `<name>_<tag>`
    (the tag keeps an input read by both the prologue and the epilogue from being declared twice);
    scalars and broadcast inputs are read element by element (`_pack_reader`)."""
    lines = []
    for name in sorted({n.name for n in nodes if n.shape == shape}):
        t = problem.program.inputs[name].dtype.c_type
        lines.append(
            f"{indent}const Pack<{t}, {vec}> {name}_{tag} = "
            f"*reinterpret_cast<const Pack<{t}, {vec}>*>({name} + {offset});\n"
        )
    return "".join(lines)


def _pack_reader(k: int, tag: str, offset: str, shape: Shape) -> Reader:
    def read(node: Node) -> str:
        if node.shape == shape:
            return f"{node.name}_{tag}.v[{k}]"
        return f"{node.name}[{broadcast_offset(node.shape, shape, f'{offset} + {k}')}]"
    return read


def load_operand(
    problem: Problem, offset: str, vec: int, indent: str, arg_index: int = 0
) -> tuple[str, list[str]]:
    """Code that reads `vec` consecutive elements of the anchor's operand at `offset` (vector
    loads of every input it reads, then the prologue per element), and their C expressions in
    the operand's compute type. With vec == 1 the inputs are read in place."""
    assert problem.anchor is not None
    root = problem.anchor.args[arg_index]
    shape = root.shape
    if reindexes(root):
        values = [indexed_value(root, f"{offset} + {k}" if k else offset, shape, expression_ctype(root),
                                f"pro{k}_") for k in range(vec)]
        return "".join(block(v.statements, indent) for v in values), [v.value for v in values]
    if vec == 1:
        value = operand_value(problem, read_at(offset, shape), arg_index, prefix="pro_")
        return block(value.statements, indent), [value.value]
    code = _pack_loads(problem, operand_inputs(problem, arg_index), vec, offset, shape, indent, "pack")
    values = []
    for k in range(vec):
        value = operand_value(problem, _pack_reader(k, "pack", offset, shape), arg_index, prefix=f"pro{k}_")
        code += block(value.statements, indent)
        values.append(value.value)
    return code, values


def store_output(problem: Problem, offset: str, anchor_values: list[str], indent: str) -> str:
    """Code that writes len(anchor_values) consecutive output elements at `offset` (one vector
    store when more than one), applying the epilogue to each anchor value (compute type)."""
    vec = len(anchor_values)
    out = problem.output.dtype
    name = problem.program.output_name
    shape = problem.output.shape
    root = epilogue_root(problem)
    code = ""
    if reindexes(root):
        values = [_indexed_epilogue(problem, root, v, f"{offset} + {k}" if k else offset, f"epi{k}_")
                  for k, v in enumerate(anchor_values)]
    elif vec == 1:
        values = [epilogue_value(problem, anchor_values[0], read_at(offset, shape), prefix="epi_")]
    else:
        code = _pack_loads(problem, epilogue_inputs(problem), vec, offset, shape, indent, "out_pack")
        values = [epilogue_value(problem, v, _pack_reader(k, "out_pack", offset, shape), prefix=f"epi{k}_")
                  for k, v in enumerate(anchor_values)]
    code += "".join(block(v.statements, indent) for v in values)
    if vec == 1:
        return code + f"{indent}{name}[{offset}] = {store_from_compute(out, values[0].value)};\n"
    code += f"{indent}Pack<{out.c_type}, {vec}> result;\n"
    code += "".join(f"{indent}result.v[{k}] = {store_from_compute(out, v.value)};\n"
                    for k, v in enumerate(values))
    return code + f"{indent}*reinterpret_cast<Pack<{out.c_type}, {vec}>*>({name} + {offset}) = result;\n"


def _indexed_epilogue(problem: Problem, root: Node, anchor_value: str, offset: str, prefix: str) -> Emitted:
    """`indexed_value` of the epilogue, the anchor's value (its dtype's compute type) converted
    to the epilogue's compute type as `epilogue_value` does."""
    assert problem.anchor is not None
    ctype = expression_ctype(root)
    anchor_ctype = compute_type(problem.anchor.dtype)
    value = atom(anchor_value) if anchor_ctype == ctype else f"(({ctype})({anchor_value}))"
    return indexed_value(root, offset, problem.output.shape, ctype, prefix, value)


def widest_bytes(problem: Problem, arg_index: int = 0) -> int:
    """The widest element among the tensors moved element-wise (bounds vector widths)."""
    nodes = [problem.output, *operand_inputs(problem, arg_index), *epilogue_inputs(problem)]
    return max(n.dtype.size for n in nodes)


def fusion_note(problem: Problem, arg_index: int = 0) -> str:
    """' with fused prologue and epilogue' (or the part that applies) for header comments."""
    parts = [
        p
        for p, present in (
            ("prologue", has_prologue(problem, arg_index)),
            ("epilogue", has_epilogue(problem)),
        )
        if present
    ]
    return (" with fused " + " and ".join(parts)) if parts else ""


def kernel_param_list(params: Sequence[Param]) -> list[str]:
    """Kernel parameters matching the launcher's: restrict pointers, then `long long` symbols."""
    return [
        f"{p.c_type} __restrict__ {p.name}" if p.role != "symbol" else f"long long {p.name}" for p in params
    ]


def shape_text(shape: Shape) -> str:
    return " x ".join(str(d) for d in shape) if shape else "1"


def describe(problem: Problem) -> str:
    """The intent's computation on one line, for the kernel's comment."""
    program = problem.program
    first = program.text.strip().splitlines()[0] if program.text.strip() else ""
    first = first.rstrip("\\ ")  # a trailing backslash would continue the // comment
    return first or f"{program.output_name} = {problem.output!r}"


# Names every memory-bound region declares (helpers, launcher locals) or that C++/CUDA own; each
# family adds the locals of its own kernels. Kernel parameters carry the intent's names.
COMMON_NAMES = frozenset(
    """
    ArgPair Compensated Combine MaxOp SumOp MaxSum MergeMaxSum Welford MergeWelford Pack load_pack store_pack
    shfl_down shfl_idx group_reduce online_add welford_add welford_add_pack workspace
    kn stream packed aligned grid blocks block
    threadIdx blockIdx blockDim gridDim warpSize dim3 auto bool break case char const continue default
    do double else enum extern false float for goto if inline int long namespace new operator private
    public register return short signed sizeof static struct switch template this true typedef union
    unsigned void volatile while
""".split()
)

_GENERATED = re.compile(r"(k[A-Z]\w*|(pro|epi|expr_|val_)\d+|\w+_(pack|first))$")


def axis_unsupported(
    problem: Problem,
    locals_: frozenset[str],
    plan_of: Callable[[Problem], Any],
    last_axis: bool | None = None,
    otherwise: str = "",
) -> str | None:
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
