"""Scalar CUDA for the value of any primitive DAG node at a symbolic multi-index.

`Body.value(node, idx)` returns a C expression for `node[idx]` (idx: one C expression per
dimension), adding `const` temporaries to `lines`. Elementwise operators fuse (inputs are read
where they are needed, broadcasting by index), views re-address their argument, and nodes that
a previous kernel materialised are loaded from their buffer. One (node, index) pair is computed
once per body, so shared sub-expressions stay shared.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.graph import Node, Shape
from .base import dim_c, load_as_compute
from .expr import literal, scalar_op

Index = tuple[str, ...]


@dataclass(frozen=True)
class Source:
    """Where a materialised node lives: a C pointer and how its elements are stored."""
    pointer: str
    storage: str          # "input" (the node's dtype, converted on load) or "compute" (already wide)


def strides(shape: Shape) -> list[str]:
    """Row-major strides of `shape` as 64-bit C expressions (folded where the dims are literals)."""
    out: list[str] = []
    number, symbols = 1, []
    for d in reversed(shape):
        out.append(" * ".join([f"{number}LL"] + symbols))
        if isinstance(d, int):
            number *= d
        else:
            symbols.append(f"(long long){dim_c(d)}")
    return list(reversed(out))


def linear(idx: Index, shape: Shape) -> str:
    """The row-major offset of `idx` in a tensor of `shape` (a 64-bit C expression)."""
    terms = [f"({i}) * {s}" if s != "1LL" else f"({i})" for i, s, d in zip(idx, strides(shape), shape)
             if not (isinstance(d, int) and d == 1)]
    return " + ".join(terms) if terms else "0LL"


def unravel(flat: str, shape: Shape) -> Index:
    """The multi-index of row-major element `flat` (a C expression) of a tensor of `shape`."""
    return tuple(f"(({flat}) / {s}) % {dim_c(d)}LL" if isinstance(d, int) else
                 f"(({flat}) / {s}) % (long long){dim_c(d)}"
                 for s, d in zip(strides(shape), shape))


def broadcast_index(idx: Index, shape: Shape) -> Index:
    """The index into an operand of `shape` that broadcasts to the indexed tensor."""
    tail = idx[len(idx) - len(shape):] if shape else ()
    return tuple("0" if d == 1 else i for i, d in zip(tail, shape))


@dataclass
class Body:
    ctype: str                                 # the float type arithmetic runs in
    sources: dict[int, Source]                 # id(node) → its materialised buffer
    lines: list[str] = field(default_factory=list)
    prefix: str = "v"
    memo: dict[tuple[int, Index], str] = field(default_factory=dict)
    # (index, shape) → a C expression known to equal linear(index, shape): the loop's own
    # counter for the index decomposed from it, and a reshape's flat offset for the index it
    # re-derives. A contiguous read there needs no division, remainder or multiply.
    linears: dict[tuple[Index, Shape], str] = field(default_factory=dict)

    def know_linear(self, idx: Index, shape: Shape, flat: str) -> None:
        """Record that `linear(idx, shape)` is `flat`."""
        self.linears[(broadcast_index(idx, shape), tuple(shape))] = flat

    def linear_of(self, idx: Index, shape: Shape) -> str:
        """The row-major offset of `idx` in a tensor of `shape`, a known expression if any."""
        return self._known_linear(idx, shape) or linear(idx, shape)

    def _known_linear(self, idx: Index, shape: Shape) -> str | None:
        return self.linears.get((broadcast_index(idx, shape), tuple(shape)))

    def temp(self, expr: str, c_type: str) -> str:
        name = f"{self.prefix}{len(self.lines)}"
        taken = {source.pointer for source in self.sources.values()}
        while name in taken:       # a tensor the user named like a temporary (`t0`) keeps its name
            name += "_"
        self.lines.append(f"const {c_type} {name} = {expr};")
        return name

    def type_of(self, node: Node) -> str:
        if node.dtype.name == "bool":
            return "bool"
        return self.ctype if node.dtype.is_float else "long long"

    def bind(self, node: Node, idx: Index, value: str) -> None:
        """Make `node[idx]` read as `value` (a fused producer's result)."""
        self.memo[(id(node), broadcast_index(idx, node.shape))] = value

    def value(self, node: Node, idx: Index) -> str:
        idx = broadcast_index(idx, node.shape)    # size-1 dims always read index 0
        key = (id(node), idx)
        if key not in self.memo:
            self.memo[key] = self._compute(node, idx)
        return self.memo[key]

    def expression(self, node: Node, idx: Index) -> str:
        """`node[idx]` computed from its arguments, even where `node` itself is materialised
        (the stage that writes it)."""
        return self._compute(node, broadcast_index(idx, node.shape), load=False)

    def _compute(self, node: Node, idx: Index, load: bool = True) -> str:
        source = self.sources.get(id(node)) if load else None
        if source is not None:
            raw = f"{source.pointer}[{self.linear_of(idx, node.shape)}]"
            if source.storage == "input":
                raw = load_as_compute(node.dtype, raw)
            return self.temp(raw, self.type_of(node))
        op = node.op
        if op == "const":
            kind = self.ctype if isinstance(node.value, float) else self.type_of(node)
            return literal(node.value, kind)
        if op == "index":
            return f"({idx[node.attr('dim')]})"
        if op == "permute":
            dims = node.attr("dims")
            inner = [""] * len(dims)
            for k, d in enumerate(dims):
                inner[d] = idx[k]
            return self.value(node.args[0], tuple(inner))
        if op == "flip":
            flipped = tuple(f"({dim_c(node.shape[k])} - 1 - ({i}))" if k in node.attr("dims") else i
                            for k, i in enumerate(idx))
            return self.value(node.args[0], flipped)
        if op == "slice":
            k, start, step = node.attr("dim"), node.attr("start"), node.attr("step")
            moved = f"({idx[k]})" if step == 1 else f"{step}LL * ({idx[k]})"
            moved = moved if start == 0 else f"({start}LL + {moved})"
            return self.value(node.args[0], idx[:k] + (moved,) + idx[k + 1:])
        if op == "pad":
            return self._pad(node, idx)
        if op == "gather":
            return self._gather(node, idx)
        if op == "reshape":
            arg = node.args[0]
            if arg.shape == node.shape:
                return self.value(arg, idx)
            flat = self._known_linear(idx, node.shape) or self.temp(linear(idx, node.shape), "long long")
            inner = unravel(flat, arg.shape)
            self.know_linear(inner, arg.shape, flat)
            return self.value(arg, inner)
        if op == "cast":
            return self._cast(node, self.value(node.args[0], broadcast_index(idx, node.args[0].shape)))
        args = [self.value(a, broadcast_index(idx, a.shape)) for a in node.args]
        return self.temp(scalar_op(node, args, self.ctype), self.type_of(node))

    def _pad(self, node: Node, idx: Index) -> str:
        """The argument read at a source index that is always in bounds: mirrored, clamped or
        wrapped by the mode; in constant mode clamped, and the value selected outside."""
        arg = node.args[0]
        mode = node.attr("mode", "constant")
        inner, inside = list(idx), []
        for k, (lo, hi) in enumerate(node.attr("pads")):
            if lo == hi == 0:
                continue
            n = int(arg.shape[k])
            j = self.temp(f"({idx[k]}) - {lo}LL", "long long")
            clamped = f"({j} < 0LL ? 0LL : ({j} > {n - 1}LL ? {n - 1}LL : {j}))"
            if mode == "reflect":
                inner[k] = f"({j} < 0LL ? -{j} : ({j} > {n - 1}LL ? {2 * (n - 1)}LL - {j} : {j}))"
            elif mode == "circular":
                inner[k] = f"({j} < 0LL ? {j} + {n}LL : ({j} > {n - 1}LL ? {j} - {n}LL : {j}))"
            else:
                inner[k] = clamped
            if mode == "constant":
                inside.append(f"({j} >= 0LL && {j} < {n}LL)")
        read = self.value(arg, tuple(inner))
        if not inside:
            return read
        kind = self.type_of(node)
        fill = literal(node.attr("value"), kind)
        return self.temp(f"({' && '.join(inside)}) ? {read} : ({kind})({fill})", kind)

    def _gather(self, node: Node, idx: Index) -> str:
        """The argument at the address the index tensor gives along dim, clamped into it."""
        x, index = node.args
        dim = node.attr("dim")
        j = self.value(index, idx)
        last = f"{dim_c(x.shape[dim])} - 1LL"
        clamped = self.temp(f"({j} < 0LL ? 0LL : ({j} > {last} ? {last} : (long long)({j})))", "long long")
        return self.value(x, idx[:dim] + (clamped,) + idx[dim + 1:])

    def _cast(self, node: Node, x: str) -> str:
        target = node.attr("dtype")
        if target.name == "f16":
            return self.temp(f"__half2float(__float2half_rn((float)({x})))", self.ctype)
        if target.name == "bf16":
            return self.temp(f"__bfloat162float(__float2bfloat16_rn((float)({x})))", self.ctype)
        if target.name == "f32" and self.ctype == "double":
            return self.temp(f"(double)(float)({x})", self.ctype)
        if target.name == "bool":
            return self.temp(f"(({x}) != 0)", "bool")
        if not target.is_float:
            return self.temp(f"(long long)({target.c_type})({x})", "long long")
        return x
