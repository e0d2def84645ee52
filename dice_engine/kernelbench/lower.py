"""Lower a traced forward to kernel plans: ATen nodes → IR expressions → one plan per kernel.

Every traced value becomes an IR expression over buffers. Elementwise work is fused into the
expression it feeds; a value is written to memory (materialized, a `KernelPlan` of its own) only
where it must be: a result of forward, a view of a computed value, a value with a heavy operator
that several operations use, and wherever one expression would hold more than one heavy
operator (a matmul feeding a softmax: the matmul and its epilogue become one kernel, the softmax
another). The sketch families may refuse a fusion later; `generate.py` then splits finer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from ..ir.dtypes import DTYPES, DType
from ..ir.graph import Node, Program
from ..ir.ops import ELEMENTWISE, HEAVY, REDUCTIONS, OpError, const, input_tensor, make
from ..lowering.sketch import reads_once_fused
from ..sketches.attention import match as match_attention
from .aten_composed import COMPOSED, COMPOSED_RESHAPING
from .aten_lookups import LOOKUPS
from .aten_einsum import EINSUM
from .aten_ops import TABLE, VIEWS, Absent, Unsupported
from .aten_reshaping import RESHAPING, ReshapingHandler
from .aten_losses import LOSSES
from .aten_slicing import SLICING
from .aten_windows import WINDOWS
from .plan import Buffer, KernelPlan, Origin, heavy_in, is_layout_view, substitute
from .trace import Traced


# Every mapped operator: handlers that read values through other shapes get `view_as` too.
HANDLERS = {**TABLE, **WINDOWS, **COMPOSED, **SLICING, **LOSSES, **LOOKUPS}
RESHAPING_HANDLERS: dict[str, ReshapingHandler] = {**RESHAPING, **COMPOSED_RESHAPING, **EINSUM}


class Unmapped(Exception):
    """An operation of forward that DICE cannot serve: `op`, `line` of the task, `why`."""

    def __init__(self, op: str, line: int | None, code: str, why: str):
        self.op, self.line, self.code, self.why = op, line, code, why
        where = f"line {line} of forward" if line is not None else "forward"
        text = f" (`{code}`)" if code else ""
        super().__init__(f"{op} at {where}{text}: {why}")


@dataclass
class Lowered:
    traced: Traced
    buffers: dict[str, Buffer]  # every buffer by name, in order of creation
    plans: list[KernelPlan]  # kernels in execution order
    outputs: list[Buffer]  # forward's results (buffers written by plans)
    output_is_tuple: bool
    notes: list[str]  # what ModelNew does differently, in words
    temp: Callable[[DType, tuple[int, ...]], Node]  # a new intermediate buffer (for finer splits)


def dtype_of(torch_dtype: Any) -> DType | None:
    name = str(torch_dtype).removeprefix("torch.")
    return next((d for d in DTYPES.values() if d.torch == name), None)


def op_name(node: Any) -> str:
    """ "aten.relu" for aten.relu.default; the Python name for other callables."""
    target = node.target
    packet = getattr(target, "overloadpacket", None)
    if packet is not None:
        return f"aten.{packet.__name__}"
    return getattr(target, "__name__", str(target))


class Lowering:
    def __init__(self, traced: Traced):
        self.traced = traced
        self.buffers: dict[str, Buffer] = {}
        self.plans: list[KernelPlan] = []
        self.origins: dict[int, tuple[Node, Origin]] = {}
        # id(expression) -> (the expression, kept alive so the id stays its own; its buffer's leaf)
        self.written: dict[int, tuple[Node, Node]] = {}
        self.values: dict[Any, Any] = {}  # fx node -> IR node | tuple of IR nodes
        self.temps = 0
        self.current: Origin | None = None  # the operation being lowered
        self.notes: list[str] = []
        self.lineage: dict[int, tuple[Node, Node]] = {}  # id(rebuilt node) -> (it, the node it replaces)

    # -- buffers ------------------------------------------------------------------------------

    def add_buffer(
        self, name: str, dtype: DType, shape: tuple[int, ...], storage: str, kind: str, offset: int = 0
    ) -> Node:
        self.buffers[name] = Buffer(name, dtype, shape, storage, kind, offset)
        return input_tensor(name, dtype, shape)

    def temp(self, dtype: DType, shape: tuple[int, ...]) -> Node:
        # not t0/v0/f0/m0: the general lowering names its C locals so, and a tensor parameter of
        # the same name would be shadowed inside the kernel
        name = f"tmp{self.temps}"
        self.temps += 1
        return self.add_buffer(name, dtype, shape, name, "temp")

    def materialize(self, expr: Node) -> Node:
        """A leaf holding `expr`'s value, writing one (and the kernels it needs) if none does."""
        if expr.op == "input":
            return expr
        if id(expr) in self.written:
            return self.written[id(expr)][1]
        self.label(expr)
        body = self.single_anchor(self.reuse_written(expr))
        out = self.temp(body.dtype, tuple(int(d) for d in body.shape))
        self.plans.append(KernelPlan(self.buffers[out.name], body, self.origins))
        for node in (expr, body):
            while True:  # the value is also that of every node this one was rebuilt from
                self.written[id(node)] = (node, out)
                if id(node) not in self.lineage:
                    break
                node = self.lineage[id(node)][1]
        return out

    def label(self, expr: Node) -> None:
        """Attribute the nodes of `expr` no operation claimed yet to the one being lowered."""
        if self.current is None:
            return
        for n in expr.walk():
            if id(n) not in self.origins and n.op not in ("input", "const"):
                self.origins[id(n)] = (n, self.current)

    def keep_rebuilt_origins(self, result: Node, args: list[Any]) -> None:
        """A heavy operator the handler rebuilt from its arguments' (a cumsum that absorbed the
        cat's zero column) keeps the operation it came from, for the report."""
        if not any(n.op in HEAVY and id(n) not in self.origins for n in result.walk()):
            return     # nothing rebuilt: the arguments need no walk
        claimed = {n.op: origin for a in _flat(args) if isinstance(a, Node) for n in a.walk()
                   if n.op in HEAVY and (origin := self.origins.get(id(n))) is not None}
        for n in result.walk():
            if id(n) not in self.origins and n.op in claimed:
                self.origins[id(n)] = (n, claimed[n.op][1])

    def reuse_written(self, expr: Node) -> Node:
        hits = {id(n): self.written[id(n)][1] for n in expr.walk() if id(n) in self.written and n is not expr}
        return substitute(expr, hits, self.origins, self.lineage) if hits else expr

    def single_anchor(self, expr: Node) -> Node:
        """`expr` rewritten to hold at most one heavy operator, writing the others' values first.
        A heavy operator whose value is broadcast back to a larger shape (x - mean(x)) is no
        kernel's epilogue: it is written first too. A whole attention stays one expression
        (the fused attention sketch serves it), and so do scalar totals of one domain joined
        elementwise (`_joined_totals`) and a normalisation whose one-kernel form reads its input
        once (`reads_once_fused`: RMS over the channels of NCHW)."""
        if not isinstance(match_attention(expr), str):
            return expr
        while True:
            if reads_once_fused(Program({}, "out", expr)):
                break
            several = len(heavy_in(expr)) > 1 and not _joined_totals(expr)
            first = _broadcast_back(expr) or (_split_point(expr) if several else [])
            if not first:
                break
            expr = substitute(expr, {id(a): self.materialize(a) for a in first}, self.origins, self.lineage)
            # writing `first` may have written other parts of `expr` on the way (the matmul
            # under a batch mean): read those too, never recompute them
            expr = self.reuse_written(expr)
        return expr

    # -- the walk -----------------------------------------------------------------------------

    def run(self) -> Lowered:
        traced = self.traced
        for ph in traced.placeholders:
            if ph.kind == "constant" and _scalar_constant(ph.value) is not None:
                self.values[ph.node] = const(_scalar_constant(ph.value))  # folded like a Python number
                continue
            if ph.kind == "constant":
                raise Unmapped(ph.target, None, "", "a tensor constant made inside forward is not supported")
            val = ph.node.meta.get("val")
            dtype = dtype_of(val.dtype)
            if dtype is None:
                raise Unmapped(ph.target, None, "", f"tensors of {val.dtype} have no IR dtype")
            prefix = {"input": "in_", "parameter": "p_", "buffer": "b_", "constant": "c_"}[ph.kind]
            name = prefix + _identifier(ph.target)
            storage = ph.target if ph.kind == "input" else _attribute(ph.target)
            self.values[ph.node] = self.add_buffer(
                name, dtype, tuple(int(d) for d in val.shape), storage, ph.kind
            )
        outputs: list[Any] = []
        is_tuple = False
        for node in traced.graph.nodes:
            if node.op == "call_function":
                self.values[node] = self.lower_node(node)
                if (
                    len(node.users) > 1
                    and isinstance(self.values[node], Node)
                    and heavy_in(self.values[node])
                ):
                    self.values[node] = self.materialize(self.values[node])
            elif node.op == "output":
                results = node.args[0]
                outputs = list(results) if isinstance(results, (list, tuple)) else [results]
                is_tuple = len(outputs) != 1
            elif node.op != "placeholder":
                raise Unmapped(
                    str(node.target), traced.line_of(node), "", f"graph node kind '{node.op}' is not handled"
                )
        out_buffers = [self.output_buffer(o) for o in outputs]
        plans = self.live_plans(out_buffers)
        return Lowered(traced, self.buffers, plans, out_buffers, is_tuple, self.notes, self.temp)

    def live_plans(self, outputs: list[Buffer]) -> list[KernelPlan]:
        """The plans whose results are read: a value only its shape was taken from (the
        argument of zeros_like) is never computed."""
        needed = {b.storage for b in outputs}
        live: list[KernelPlan] = []
        for plan in reversed(self.plans):
            if plan.out.storage in needed:
                live.append(plan)
                needed |= {self.buffers[n.name].storage for n in plan.leaves()}
        return live[::-1]

    def output_buffer(self, value: Any) -> Buffer:
        if isinstance(self.values.get(value), Absent):
            raise Unmapped("output", None, "", self.values[value].why)
        if not hasattr(value, "op") or value not in self.values or not isinstance(self.values[value], Node):
            raise Unmapped("output", None, "", "forward returns something other than tensors")
        expr = self.values[value]
        if expr.op == "input" and self.buffers[expr.name].kind != "temp":
            expr = make("cast", [expr], dtype=expr.dtype)  # a result must be a fresh tensor: copy
        leaf = self.materialize(expr)
        return self.buffers[leaf.name]

    def lower_node(self, node: Any) -> Any:
        name, traced = op_name(node), self.traced
        line = traced.line_of(node)
        code = traced.source_line(line)
        if name == "getitem":
            return self.values[node.args[0]][node.args[1]]
        args = [self._value(a) for a in node.args]
        kwargs = {k: self._value(v) for k, v in node.kwargs.items()}
        absent = next((v for v in _flat([*args, *kwargs.values()]) if isinstance(v, Absent)), None)
        if absent is not None:
            raise Unmapped(name, line, code, absent.why)
        if name in VIEWS:
            return self.view(args[0], node, name, line, code)
        if self.is_state_update(name, args, node):
            self.notes.append(
                f"{name} on {self.buffers[args[0].name].storage} (line {line}) updates module state "
                "that forward's result does not read; ModelNew does not repeat it"
            )
            return args[0]
        self.current = Origin(name, line)
        # an in-place form (x.relu_(), inplace=True): the operator's value, which x then holds
        known = name in HANDLERS or name in RESHAPING_HANDLERS
        base = name[:-1] if name.endswith("_") and not known else name
        try:
            if base in RESHAPING_HANDLERS:
                result = RESHAPING_HANDLERS[base](args, kwargs, self.view_as)
            elif base in HANDLERS:
                result = HANDLERS[base](args, kwargs)
            else:
                raise Unmapped(name, line, code, "this operator has no mapping to DICE's IR yet")
        except (Unsupported, OpError) as e:
            raise Unmapped(name, line, code, str(e)) from None
        except (TypeError, ValueError, IndexError, KeyError) as e:
            raise Unmapped(name, line, code, f"unexpected arguments ({type(e).__name__}: {e})") from None
        for r in result if isinstance(result, tuple) else (result,):
            if isinstance(r, Node):  # not a result with no IR form (adaptive_max_pool's indices)
                self.keep_rebuilt_origins(r, args)
                self.label(r)
        if base != name and node.args and node.args[0] in self.values and isinstance(result, Node):
            self.values[node.args[0]] = result  # later reads of x see the updated value
        return result

    def is_state_update(self, name: str, args: list[Any], node: Any) -> bool:
        """An in-place operator on a module buffer whose result nothing reads (BatchNorm's
        counter of batches)."""
        target = args[0] if args else None
        return (
            name.endswith("_")
            and isinstance(target, Node)
            and target.op == "input"
            and self.buffers[target.name].kind == "buffer"
            and not node.users
        )

    def _value(self, v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return type(v)(self._value(x) for x in v)
        if hasattr(v, "op") and hasattr(v, "target") and v in self.values:
            return self.values[v]
        return v

    def view(self, value: Node, node: Any, name: str, line: int | None, code: str) -> Node:
        """A view's value: the same storage read with the traced result's shape."""
        try:
            return self.view_as(value, tuple(int(d) for d in node.meta["val"].shape))
        except Unsupported as e:
            raise Unmapped(name, line, code, str(e)) from None

    def view_as(self, value: Node, shape: tuple[int, ...], offset: int | None = None) -> Node:
        """`value` read with another shape of the same element count (written first if it is
        computed): a buffer over the same storage. With `offset`, the contiguous part of
        `value` that starts `offset` elements in (mean and variance of one written result)."""
        numel = math.prod(int(d) for d in value.shape)
        whole = offset is None
        offset = offset or 0
        if offset < 0 or (math.prod(shape) != numel if whole else offset + math.prod(shape) > numel):
            raise Unsupported(f"cannot view {list(value.shape)} as {list(shape)}")
        leaf = self.materialize(value)
        base = self.buffers[leaf.name]
        if shape == base.shape and whole:
            return leaf
        view_name = f"{base.name}_v{sum(1 for b in self.buffers if b.startswith(base.name + '_v'))}"
        return self.add_buffer(view_name, base.dtype, shape, base.storage, base.kind, base.offset + offset)


def _broadcast_back(expr: Node) -> list[Node]:
    """Operands holding heavy work that an elementwise operator reads into a larger shape
    (x - mean(x)): such a value is no kernel's epilogue, it must be in memory first."""
    out: dict[int, Node] = {}
    for n in expr.walk():
        if n.op in HEAVY:
            continue
        for a in n.args:
            if a.shape != n.shape and a.op != "input" and heavy_in(a):
                out[id(a)] = a
    return list(out.values())


def _joined_totals(expr: Node) -> bool:
    """Whether `expr` is scalar elementwise work over full reductions of operands of one length
    that hold no other heavy work (a loss's mean over the rows kept: sum(loss) / sum(kept)).
    One plan serves them (the general lowering's stages), with no scalar written in between."""
    heavy = heavy_in(expr)
    if expr.shape != () or len(heavy) < 2:
        return False
    lengths = {math.prod(int(d) for d in h.args[0].shape) for h in heavy}
    if len(lengths) != 1:
        return False
    if any(h.op not in REDUCTIONS or h.shape != () or heavy_in(h.args[0]) for h in heavy):
        return False
    stack, tops = [expr], {id(h) for h in heavy}
    while stack:
        n = stack.pop()
        if id(n) in tops:
            continue
        if n.op not in ELEMENTWISE and n.op not in ("const", "input"):
            return False
        stack.extend(n.args)
    return True


def _split_point(expr: Node) -> list[Node]:
    """What to write to memory so that fewer heavy operators meet: at the lowest node where two
    meet, a heavy operator's heavy-holding operands, or all but the first of an elementwise join."""
    for n in expr.walk():
        if len(heavy_in(n)) < 2:
            continue
        holders = [a for a in n.args if heavy_in(a) and not is_layout_view(a, n)]
        return holders if n.op in HEAVY else holders[1:]
    return []


def _flat(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        out += _flat(list(v)) if isinstance(v, (list, tuple)) else [v]
    return out


def _scalar_constant(value: Any) -> float | int | bool | None:
    """The number a one-element constant tensor holds (None for anything else)."""
    from torch._subclasses.fake_tensor import FakeTensor

    numel = getattr(value, "numel", None)
    if numel is None or numel() != 1 or isinstance(value, FakeTensor) or value.device.type == "meta":
        return None  # a fake tensor (a module attribute built with the model) holds no value
    return value.item()


def _identifier(text: str) -> str:
    out = "".join(c if c.isalnum() else "_" for c in text)
    return out if out and not out[0].isdigit() else f"_{out}"


def _attribute(target: str) -> str:
    """`self.conv.weight` for "conv.weight"; `self.get_parameter("layers.0.weight")`-style
    lookups are not needed: every part that is not an identifier is indexed."""
    parts = target.split(".")
    out = "self"
    for p in parts:
        out += f"[{int(p)}]" if p.isdigit() else f".{p}"
    return out


def lower(traced: Traced) -> Lowered:
    return Lowering(traced).run()
