"""Scalar CUDA code for elementwise expression DAGs (fused prologues, epilogues, maps).

`emit(root, leaves, ctype)` returns statements and the C expression of `root`, given C
expressions (already in the compute type) for its leaves: inputs, and for fused kernels the
anchor's value. Nodes used more than once get a named temporary; the rest are inlined.
"""
from __future__ import annotations

import re

from dataclasses import dataclass

from ..ir.graph import Node


@dataclass
class Emitted:
    statements: list[str]   # "float t0 = ...;" lines, in order
    value: str              # C expression for the root


def literal(value: float | int | bool, ctype: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if ctype in ("float", "double"):
        text = repr(float(value))
        if text in ("inf", "-inf"):
            text = text.replace("inf", "INFINITY")
            return text if ctype == "double" else f"({text})"
        return text + ("f" if ctype == "float" else "")
    return str(int(value))


def _fn(name: str, ctype: str) -> str:
    """The float or double overload name of a libm function."""
    return name + "f" if ctype == "float" else name


def _op_expr(node: Node, a: list[str], ctype: str) -> str:
    op = node.op
    lit = lambda v: literal(v, ctype)  # noqa: E731
    fl = node.dtype.is_float or node.op in ("lt", "le", "gt", "ge", "eq", "ne")
    binary = {"add": "+", "sub": "-", "mul": "*", "div": "/",
              "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=",
              "logical_and": "&&", "logical_or": "||"}
    if op in binary:
        return f"({a[0]} {binary[op]} {a[1]})"
    if op == "neg":
        return f"(-{a[0]})"
    if op == "logical_not":
        return f"(!{a[0]})"
    if op == "where":
        return f"({a[0]} ? {a[1]} : {a[2]})"
    if op == "cast":
        return f"(({ctype}){a[0]})"
    if not fl:   # integer arithmetic, as conditionals: max/min overloads of mixed int widths are ambiguous
        if op in ("maximum", "minimum"):
            return f"({a[0]} {'>' if op == 'maximum' else '<'} {a[1]} ? {a[0]} : {a[1]})"
        return {"abs": lambda: f"({a[0]} < 0 ? -{a[0]} : {a[0]})",
                "relu": lambda: f"({a[0]} > 0 ? {a[0]} : 0)",
                **{r: lambda: a[0] for r in ("floor", "ceil", "round", "trunc")},
                "clamp": lambda: _clamp_int(node, a[0])}[op]()
    one = lit(1.0)
    if op == "pow":
        exponent = node.args[1]
        if exponent.op == "const" and exponent.value == 2:
            return f"({a[0]} * {a[0]})"
        if exponent.op == "const" and exponent.value == 0.5:
            return f"{_fn('sqrt', ctype)}({a[0]})"
        return f"{_fn('pow', ctype)}({a[0]}, {a[1]})"
    simple = {"exp": "exp", "log": "log", "sqrt": "sqrt", "abs": "fabs", "tanh": "tanh", "erf": "erf",
              "sin": "sin", "cos": "cos", "floor": "floor", "ceil": "ceil", "round": "rint", "trunc": "trunc",
              "maximum": "fmax", "minimum": "fmin"}
    if op in simple:
        return f"{_fn(simple[op], ctype)}({', '.join(a)})"
    if op == "rsqrt":
        return f"rsqrt{'f' if ctype == 'float' else ''}({a[0]})"
    if op == "relu":
        return f"{_fn('fmax', ctype)}({a[0]}, {lit(0.0)})"
    if op == "sigmoid":
        return f"({one} / ({one} + {_fn('exp', ctype)}(-{a[0]})))"
    if op == "silu":
        return f"({a[0]} / ({one} + {_fn('exp', ctype)}(-{a[0]})))"
    if op == "leaky_relu":
        return f"({a[0]} > {lit(0.0)} ? {a[0]} : {a[0]} * {lit(node.attr('negative_slope'))})"
    if op == "gelu":
        x = a[0]
        if node.attr("approximate") == "tanh":
            inner = f"{lit(0.7978845608028654)} * ({x} + {lit(0.044715)} * {x} * {x} * {x})"
            return f"({lit(0.5)} * {x} * ({one} + {_fn('tanh', ctype)}({inner})))"
        return f"({lit(0.5)} * {x} * ({one} + {_fn('erf', ctype)}({x} * {lit(0.7071067811865476)})))"
    if op == "clamp":
        out = a[0]
        if node.attr("min") is not None:
            out = f"{_fn('fmax', ctype)}({out}, {lit(node.attr('min'))})"
        if node.attr("max") is not None:
            out = f"{_fn('fmin', ctype)}({out}, {lit(node.attr('max'))})"
        return out
    raise ValueError(f"no scalar code for operator '{op}'")


def scalar_op(node: Node, args: list[str], ctype: str) -> str:
    """The C expression of one elementwise `node` applied to the C expressions `args`."""
    return _op_expr(node, args, ctype)


def _clamp_int(node: Node, x: str) -> str:
    if node.attr("min") is not None:
        low = int(node.attr("min"))
        x = f"({x} < {low} ? {low} : {x})"
    if node.attr("max") is not None:
        high = int(node.attr("max"))
        x = f"({x} > {high} ? {high} : {x})"
    return x


_ATOM = re.compile(r"[A-Za-z_][\w.]*(\[[^\[\]]*\])*")  # a name, maybe indexed: safe to substitute bare
_CALL_OR_GROUP = re.compile(r"[A-Za-z_][\w:.]*\s*\(|\(")  # `f(...)` or `(...)`, if it closes at the end


def _one_operand(text: str) -> bool:
    """Whether `text` is a single operand in C: a name (maybe indexed), or a call or a
    parenthesised group whose first opening parenthesis closes at the very end."""
    if _ATOM.fullmatch(text):
        return True
    head = _CALL_OR_GROUP.match(text)
    if head is None:
        return False
    depth = 0
    for i in range(head.end() - 1, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i == len(text) - 1
    return False


def emit(root: Node, leaves: dict[int, str], ctype: str = "float", prefix: str = "t") -> Emitted:
    """Code for `root`. `leaves` maps id(node) → C expression for inputs/anchors (any node found
    there is not expanded). Constants are emitted as literals of `ctype`."""
    uses: dict[int, int] = {}
    order = list(root.walk())
    for n in order:
        if id(n) in leaves:
            continue
        for arg in n.args:
            uses[id(arg)] = uses.get(id(arg), 0) + 1
    exprs: dict[int, str] = {}
    statements: list[str] = []
    for n in order:
        if id(n) in leaves:
            # A leaf is one operand: `acc + bias` must not become `acc + bias * ...` under the
            # operators around it (conv and norm epilogues computed that before).
            text = leaves[id(n)]
            exprs[id(n)] = text if _one_operand(text) else f"({text})"
            continue
        if n.op == "const":
            exprs[id(n)] = literal(n.value, ctype)
            continue
        if n.op == "input":
            raise ValueError(f"input '{n.name}' has no leaf expression")
        expr = _op_expr(n, [exprs[id(a)] for a in n.args], ctype)
        if uses.get(id(n), 0) > 1:
            var = f"{prefix}{len(statements)}"
            c = "bool" if n.dtype.name == "bool" else ctype
            statements.append(f"const {c} {var} = {expr};")
            expr = var
        exprs[id(n)] = expr
    return Emitted(statements, exprs[id(root)])
