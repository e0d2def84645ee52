"""The preprocessor as far as sizes need it: which branch of `#if`/`#ifdef` is compiled when
its condition is made of constants, and which value a macro has where (`#define`, `#undef`)."""
from __future__ import annotations

from tree_sitter import Node

from .grammar import FIELD

CONDITIONALS = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef")
_BRANCH_ENDS = ("preproc_else", "preproc_elif", "preproc_elifdef")


def compiled_children(node: Node, constants: dict[str, int], defined: set[str]) -> list[Node]:
    """The named children of a conditional group that are compiled: the taken branch when the
    condition is known, else every branch (what an analysis that cannot tell must look at)."""
    taken = _taken(node, constants, defined)
    body = [c for c in node.named_children if c.type not in _BRANCH_ENDS and not _is_condition(node, c)]
    alternative = node.child_by_field_id(FIELD.alternative)
    if taken is True:
        return body
    rest: list[Node] = []
    if alternative is not None:
        rest = compiled_children(alternative, constants, defined) if alternative.type != "preproc_else" \
            else list(alternative.named_children)
    return rest if taken is False else body + rest


def _is_condition(node: Node, child: Node) -> bool:
    cond = node.child_by_field_id(FIELD.condition) or node.child_by_field_id(FIELD.name)
    return cond is not None and cond.id == child.id


def _taken(node: Node, constants: dict[str, int], defined: set[str]) -> bool | None:
    if node.type in ("preproc_ifdef", "preproc_elifdef"):
        name = node.child_by_field_id(FIELD.name)
        if name is None:
            return None
        negated = (node.children[0].text or b"").endswith(b"ndef")
        return (name.text.decode() in defined) != negated     # type: ignore[union-attr]
    cond = node.child_by_field_id(FIELD.condition)
    value = _value(cond, constants, defined) if cond is not None else None
    return None if value is None else value != 0


def _value(node: Node, constants: dict[str, int], defined: set[str]) -> int | None:
    """An `#if` expression's value, or None when some part is not known."""
    t = node.type
    if t == "number_literal":
        digits = (node.text or b"").decode().rstrip("uUlL")
        try:
            return int(digits, 0) if not (len(digits) > 1 and digits[0] == "0" and digits[1].isdigit()) \
                else int(digits, 8)
        except ValueError:
            return None
    if t == "identifier":
        name = (node.text or b"").decode()
        if name in constants:
            return constants[name]
        return None if name in defined else 0      # an undefined name is 0 in `#if`
    if t == "preproc_defined":
        names = [c for c in node.named_children if c.type == "identifier"]
        return int(bool(names) and names[0].text.decode() in defined)   # type: ignore[union-attr]
    if t == "parenthesized_expression" and node.named_children:
        return _value(node.named_children[0], constants, defined)
    if t == "unary_expression":
        arg = _value(node.child_by_field_id(FIELD.argument), constants, defined)
        op = node.child_by_field_id(FIELD.operator)
        kind = op.type if op is not None else ""
        if arg is None:
            return None
        return {"!": int(not arg), "-": -arg, "~": ~arg, "+": arg}.get(kind)
    if t == "binary_expression":
        op = node.child_by_field_id(FIELD.operator)
        kind = op.type if op is not None else ""
        left = _value(node.child_by_field_id(FIELD.left), constants, defined)
        right = _value(node.child_by_field_id(FIELD.right), constants, defined)
        if kind == "&&" and (left == 0 or right == 0):
            return 0
        if kind == "||" and (left not in (None, 0) or right not in (None, 0)):
            return 1
        if left is None or right is None:
            return None
        return _BINARY[kind](left, right) if kind in _BINARY else None
    return None


_BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b) if b else 0, "%": lambda a, b: a % b if b else 0,
    "<<": lambda a, b: a << b if 0 <= b < 64 else 0, ">>": lambda a, b: a >> b if 0 <= b < 64 else 0,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b), "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "&&": lambda a, b: int(bool(a and b)), "||": lambda a, b: int(bool(a or b)),
}
