"""`expr.emit` substitutes leaf expressions as single operands: a compound leaf (a biased
accumulator, a normalised and scaled value) keeps its parentheses under the operators around it.
KernelBench level 2's 34, 67, 69 and 71 computed `acc + bias * ...` before (wrong on an H100)."""

from __future__ import annotations

import pytest

from dice_engine.intent import parse_intent
from dice_engine.sketches.expr import emit


def _root_and_leaf(text: str):
    root = parse_intent(text).output
    x = next(n for n in root.walk() if n.op == "input" and n.name == "x")
    return root, x


@pytest.mark.parametrize("leaf, kept", [
    ("acc[i][j] + bias[c]", "(acc[i][j] + bias[c])"),
    ("(v - mean) * rstd * w[col] + b[col]", "((v - mean) * rstd * w[col] + b[col])"),
    ("acc[i][j]", "acc[i][j]"),
    ("p.v[elem]", "p.v[elem]"),
    ("__half2float(x[i])", "__half2float(x[i])"),
    ("f(a) + g(b)", "(f(a) + g(b))"),
])
def test_a_compound_leaf_is_one_operand(leaf, kept):
    root, x = _root_and_leaf("y = x * 0.5 * (1.0 + x); x: f32[8]")
    out = emit(root, {id(x): leaf}, "float")
    text = " ".join([*out.statements, out.value])
    assert kept in text
    if kept != leaf:
        # never the bare text directly followed or preceded by another operator
        assert f"{leaf} *" not in text.replace(kept, "") and f"* {leaf}" not in text.replace(kept, "")
