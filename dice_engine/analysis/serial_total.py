"""`precision` (DICE-P007): one float accumulator that a single thread grows by more terms than a
float can count.

A float holds 24 significant bits: a running sum `acc += x[i]` of more than about 2^24 like-signed
terms of similar size stops growing (each term falls below half the total's last place), and with
mixed signs its rounding error still grows with the count. The count is the product of the trip
counts of the loops between the accumulator's declaration and the update, each read from the
loop header with the file's constants and the values its launch sites pass (`for (r = 0; r <
rows; ++r)` with `rows` = 2^24 at the launch; a stride `r += 256` divides). From 2^24 terms on it is
reported: a total of 2^24 terms of size t is 2^24 t, whose last place is already t. Loops whose count is
not known from the file count once; compensated (Kahan) sums assign the total rather than add to
it and are not matched.
"""
from __future__ import annotations

import re

from tree_sitter import Node

from .findings import Finding
from .report import finding
from .rule import Context, Rule
from .syntax import FIELD, operator, text, trip_count

LIMIT = 1 << 24          # float's significand: a total of this many like terms has no bit left for one more
_FMA = re.compile(r"(?:__)?fmaf?(?:_r[nzud])?$")


def serial_total_findings(ctx: Context) -> list[Finding]:
    if not ctx.fn.is_kernel and not ctx.fn.is_device:
        return []
    out: list[Finding] = []
    seen: set[str] = set()
    for node in ctx.found.get("assign", ()):
        acc = _accumulated(node)
        if acc is None or acc in seen or ctx.typer.type_of(node.child_by_field_id(FIELD.left)) != "float":
            continue
        count = _terms(node, acc, ctx.constants)
        if count >= LIMIT:
            seen.add(acc)
            out.append(finding(ctx.src, node, "DICE-P007", _message(acc, count), data={"terms": count}))
    return out


def _accumulated(node: Node) -> str | None:
    """The variable a statement adds a term to: `acc += e`, `acc = acc + e`, `acc = fmaf(a, b,
    acc)`; None for anything else."""
    left, right = node.child_by_field_id(FIELD.left), node.child_by_field_id(FIELD.right)
    if left is None or right is None or left.type != "identifier":
        return None
    name = text(left)
    op = operator(node)
    if op in ("+=", "-="):
        return name
    if op != "=":
        return None
    if right.type == "binary_expression" and operator(right) in ("+", "-") and \
            text(right.child_by_field_id(FIELD.left)) == name:
        return name
    if right.type == "call_expression" and _FMA.match(text(right.child_by_field_id(FIELD.function))):
        args = right.child_by_field_id(FIELD.arguments)
        if args is not None and len(args.named_children) == 3 and text(args.named_children[2]) == name:
            return name
    return None


def _terms(node: Node, acc: str, constants: dict[str, int]) -> int:
    """The terms one thread adds to `acc` at `node`: the product of the known trip counts of the
    loops around it, up to the block that declares `acc` (loops outside it restart the sum)."""
    count = 1
    scope = node.parent
    while scope is not None and scope.type != "function_definition":
        if scope.type == "compound_statement" and _declares(scope, acc):
            break
        if scope.type == "for_statement":
            count *= trip_count(scope, constants, unit_step=False, start_if_unknown=0) or 1
        scope = scope.parent
    return count


def _declares(block: Node, name: str) -> bool:
    for child in block.named_children:
        if child.type == "declaration" and re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)",
                                                     text(child).split("=")[0]):
            return True
    return False


def _message(acc: str, count: int) -> str:
    return (f"`{acc}` adds {count:,} terms (2^{count.bit_length() - 1}) one after another in one float: from "
            "2^24 like-signed terms on a float total stops growing (each term is rounded to the total's 24 "
            "bits) and its error grows with the count. Accumulate in double, or sum in blocks (a partial "
            "of a few thousand terms at a time, the partials added at the end), or spread the sum over "
            "threads and reduce.")


RULE = Rule("serial total", ("DICE-P007",), serial_total_findings)
