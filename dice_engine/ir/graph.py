"""The tensor IR: a DAG of `Node`s over declared input tensors, wrapped in a `Program`.

Every intent, whichever form it was written in, becomes one `Program`. Shapes are tuples of
`Dim`: an int, or a symbol name whose value comes from the intent's options or from a kernel
parameter at run time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Union

from .dtypes import DType

Dim = Union[int, str]
Shape = tuple[Dim, ...]


@dataclass(frozen=True)
class TensorDecl:
    name: str
    dtype: DType
    shape: Shape


@dataclass(frozen=True, eq=False)
class Node:
    """One value in the DAG. `op` is "input", "const" or an operator name from `ops.OPS`.

    Nodes compare by identity so that a shared sub-expression is one node.
    """

    op: str
    args: tuple["Node", ...]
    dtype: DType
    shape: Shape
    attrs: tuple[tuple[str, Any], ...] = ()
    name: str | None = None       # input name, for op == "input"
    value: float | int | bool | None = None  # scalar value, for op == "const"

    def attr(self, key: str, default: Any = None) -> Any:
        for k, v in self.attrs:
            if k == key:
                return v
        return default

    @property
    def rank(self) -> int:
        return len(self.shape)

    def walk(self) -> Iterator["Node"]:
        """Every node reachable from here, each once, inputs before users (topological)."""
        seen: set[int] = set()
        order: list[Node] = []
        stack: list[tuple[Node, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((a, False) for a in reversed(node.args) if id(a) not in seen)
        return iter(order)

    def __repr__(self) -> str:
        if self.op == "input":
            return f"{self.name}:{self.dtype}{list(self.shape)}"
        if self.op == "const":
            return repr(self.value)
        extra = "".join(f", {k}={v!r}" for k, v in self.attrs)
        return f"{self.op}({', '.join(map(repr, self.args))}{extra})"


@dataclass
class Program:
    """A whole intent: declared inputs, the output expression, symbols and options."""

    inputs: dict[str, TensorDecl]
    output_name: str
    output: Node
    symbols: dict[str, int | None] = field(default_factory=dict)   # None: bound only at run time
    options: dict[str, str] = field(default_factory=dict)         # arch=, name=, goal=, budget=, ...
    text: str = ""                                                # the intent as written

    def input_nodes(self) -> list[Node]:
        return [n for n in self.output.walk() if n.op == "input"]

    def symbol_names(self) -> list[str]:
        """Symbols used by input shapes, in order of first appearance."""
        names: list[str] = []
        for decl in self.inputs.values():
            for d in decl.shape:
                if isinstance(d, str) and d not in names:
                    names.append(d)
        return names

    def concrete_shape(self, shape: Shape, hint: int = 4096) -> tuple[int, ...]:
        """`shape` with symbols replaced by their values, or by `hint` where unbound."""
        out = []
        for d in shape:
            if isinstance(d, int):
                out.append(d)
            else:
                v = self.symbols.get(d)
                out.append(v if v is not None else hint)
        return tuple(out)
