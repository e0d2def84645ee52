"""aten.einsum of one or two operands as the IR's sums, permutes and matmuls.

Two operands: letters only one operand has and the output lacks are summed out first; the rest
are batch (both operands and the output), left / right (one operand and the output) and
contracted (both operands, not the output). Each operand is permuted to (batch, left|right,
contracted), read as a 3-D (or 2-D) matrix through a view, multiplied, and the product is read
back with the output's letters and permuted to their order.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..ir.graph import Node
from ..ir.ops import make
from .aten_ops import Unsupported
from .aten_reshaping import View, _shape


def _parse(equation: str, count: int) -> tuple[list[str], str]:
    eq = equation.replace(" ", "")
    if "..." in eq:
        raise Unsupported("einsum with an ellipsis has no IR form yet")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if not arrow:  # implicit output: the letters seen once, in alphabetical order
        letters = "".join(terms)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(terms) != count:
        raise Unsupported(f"einsum equation '{equation}' names {len(terms)} operands, got {count}")
    for term in terms + [out]:
        if len(set(term)) != len(term):
            raise Unsupported(f"einsum with a repeated letter in '{term}' (a diagonal) has no IR form yet")
        if not term.isalpha() and term:
            raise Unsupported(f"einsum term '{term}' is not letters")
    if set(out) - set("".join(terms)):
        raise Unsupported(f"einsum output '{out}' has letters no operand has")
    return terms, out


def _permuted(x: Node, term: str, order: str) -> Node:
    if term == order:
        return x
    return make("permute", [x], dims=tuple(term.index(c) for c in order))


def _sum_out(x: Node, term: str, keep: set[str]) -> tuple[Node, str]:
    """x with the letters not in `keep` summed away (highest dim first: the IR reduces adjacent
    dims, one at a time is always adjacent)."""
    for i in reversed(range(len(term))):
        if term[i] not in keep:
            x = make("sum", [x], dim=i, keepdim=False)
            term = term[:i] + term[i + 1 :]
    return x, term


def _einsum(a: Sequence[Any], k: dict[str, Any], view: View) -> Node:
    operands = list(a[1])
    terms, out = _parse(str(a[0]), len(operands))
    sizes: dict[str, int] = {}
    for x, term in zip(operands, terms):
        if x.rank != len(term):
            raise Unsupported(f"einsum term '{term}' has {len(term)} letters for a tensor of rank {x.rank}")
        for c, s in zip(term, _shape(x)):
            if sizes.setdefault(c, s) != s:
                raise Unsupported(
                    f"einsum letter '{c}' has sizes {sizes[c]} and {s} (broadcasting has no IR form yet)"
                )
    if len(operands) == 1:
        x, term = _sum_out(operands[0], terms[0], set(out))
        return _permuted(x, term, out)
    if len(operands) != 2:
        raise Unsupported(f"einsum of {len(operands)} operands has no IR form yet")
    (x, tx), (y, ty) = (
        _sum_out(o, t, set(out) | set(u)) for o, t, u in zip(operands, terms, reversed(terms))
    )
    batch = "".join(c for c in out if c in tx and c in ty)
    left = "".join(c for c in out if c in tx and c not in ty)
    right = "".join(c for c in out if c in ty and c not in tx)
    contracted = "".join(c for c in tx if c in ty and c not in out)

    def extent(letters: str) -> int:
        return math.prod(sizes[c] for c in letters)

    lead = (extent(batch),) if batch else ()
    lhs = view(_permuted(x, tx, batch + left + contracted), lead + (extent(left), extent(contracted)))
    rhs = view(_permuted(y, ty, batch + contracted + right), lead + (extent(contracted), extent(right)))
    product = view(make("matmul", [lhs, rhs]), tuple(sizes[c] for c in batch + left + right))
    return _permuted(product, batch + left + right, out)


EINSUM = {"aten.einsum": _einsum}
