"""What the translation produces before any kernel exists: buffers and kernel plans.

A `Buffer` is a tensor in memory at run time: a forward argument, a parameter or buffer of the
module, or an intermediate the ModelNew allocates with `torch.empty`. A view (reshape, squeeze,
...) of a contiguous buffer is another `Buffer` over the same storage. A `KernelPlan` is one
DICE program: an IR expression over buffers (its `input` nodes carry buffer names) whose value
is written to a new buffer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.dtypes import DType
from ..ir.graph import Node
from ..ir.ops import HEAVY
from ..ir.patterns import _is_layout_view as is_layout_view
from ..ir.row_gather import row_gathers


@dataclass(frozen=True)
class Buffer:
    name: str  # the C parameter name (and, for temporaries, the Python variable)
    dtype: DType
    shape: tuple[int, ...]
    storage: str  # the Python expression whose data_ptr() the kernel reads or writes
    kind: str  # "input" | "parameter" | "buffer" | "constant" | "temp"
    offset: int = 0  # elements into the storage where this buffer starts (a part of a written value)


@dataclass
class Origin:
    """Which traced operation produced an IR node: for the report and for messages."""

    op: str  # "aten.relu" ...
    line: int | None  # line of the task file


@dataclass
class KernelPlan:
    out: Buffer
    expr: Node
    # id(IR node) -> (the node, kept alive so the id stays its own; the operation it computes)
    origins: dict[int, tuple[Node, Origin]] = field(default_factory=dict)

    def leaves(self) -> list[Node]:
        """The buffers the expression reads, one node per name, in first-use order."""
        seen: dict[str, Node] = {}
        for n in self.expr.walk():
            if n.op == "input" and n.name not in seen:
                seen[n.name] = n
        return list(seen.values())

    def operations(self) -> list[Origin]:
        """The traced operations this kernel computes, in order."""
        out, seen = [], set()
        for n in self.expr.walk():
            o = self.origins.get(id(n), (None, None))[1]
            if o is not None and id(o) not in seen:
                seen.add(id(o))
                out.append(o)
        return out


def heavy_in(node: Node) -> list[Node]:
    """The heavy operators (a kernel anchor each) in `node`'s expression; a transpose of an
    input that a matmul reads is its operand layout, not an operator of its own, and a row
    gather (a log_softmax picked at a class index, `ir/row_gather.py`) is one row pass."""
    nodes = list(node.walk())
    layout = {id(a) for n in nodes for a in n.args if is_layout_view(a, n)}
    for gather in row_gathers(node):
        layout |= gather.interior
    return [n for n in nodes if n.op in HEAVY and id(n) not in layout]


def substitute(
    root: Node,
    replace: dict[int, Node],
    origins: dict[int, tuple[Node, Origin]] | None = None,
    lineage: dict[int, tuple[Node, Node]] | None = None,
) -> Node:
    """`root` with the nodes whose id is in `replace` swapped for their replacements (shapes
    and dtypes are unchanged, so nodes are rebuilt as they are, not re-derived). Rebuilt nodes
    inherit their originals' entries in `origins`; `lineage` maps each to (itself, original)."""
    done: dict[int, Node] = {}
    for n in root.walk():
        if id(n) in replace:
            done[id(n)] = replace[id(n)]
        elif n.args:
            args = tuple(done[id(a)] for a in n.args)
            done[id(n)] = (
                n
                if all(a is b for a, b in zip(args, n.args))
                else Node(n.op, args, n.dtype, n.shape, n.attrs, n.name, n.value)
            )
            new = done[id(n)]
            if new is not n and origins is not None and id(n) in origins:
                origins[id(new)] = (new, origins[id(n)][1])
            if new is not n and lineage is not None:
                lineage[id(new)] = (new, n)
        else:
            done[id(n)] = n
    return done[id(root)]
