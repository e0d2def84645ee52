"""Intents nested too deeply are a clear IntentError; a region whose @dice-end was deleted is
told apart from one the user typed into, and never written."""
from __future__ import annotations

import pytest

from dice_engine.intent import IntentError, find_intents, parse_intent, region_edit
from dice_engine.intent.regions import apply_edit
from dice_engine.intent.syntax import MAX_NESTING


@pytest.mark.parametrize("intent", [
    "y = " + "(" * 1000 + "x" + ")" * 1000 + "; x: f32[16]",
    "y = " + "-" * 1000 + "x; x: f32[16]",
    "y = " + " + ".join(["x"] * 1000) + "; x: f32[16]",
    "y = " + "relu(" * 300 + "x" + ")" * 300 + "; x: f32[16]",
])
def test_deep_nesting_is_an_intent_error_not_a_recursion_error(intent):
    with pytest.raises(IntentError, match="nests"):
        parse_intent(intent)


def test_nesting_up_to_the_limit_still_parses():
    depth = MAX_NESTING - 4
    program = parse_intent("y = " + "(" * depth + "relu(x)" + ")" * depth + "; x: f32[16]")
    assert program.output_name == "y"


def _generated(source: str) -> str:
    (site,) = find_intents(source)
    return apply_edit(source, region_edit(source, site, "__global__ void k() {}\nint z;\n", "sum"))


def test_a_lost_end_marker_with_the_body_intact_is_told_apart():
    text = _generated("// @dice: y = relu(x); x: f32[16]\nint user = 1;\n// @dice-end\n")
    lines = text.split("\n")
    end = lines.index("// @dice-end")
    without_end = "\n".join(lines[:end] + lines[end + 1:])
    (site,) = find_intents(without_end)
    assert site.region is not None and site.region.missing_end == end
    problem = next(p for p in find_intents(without_end).problems if p.restore_end_at is not None)
    assert problem.restore_end_at == end
    with pytest.raises(ValueError, match="@dice-end"):
        region_edit(without_end, site, "x", "y")


def test_typing_inside_a_region_is_an_edit_not_a_lost_end():
    text = _generated("// @dice: y = relu(x); x: f32[16]\n")
    typed = text.replace("int z;\n", "int mine;\nint z;\n")
    (site,) = find_intents(typed)
    assert site.region.edited and site.region.missing_end is None
    # Lines added after the last generated line read like a lost @dice-end in the text alone;
    # the server tells the two apart by where it last saw the region's end (dice_lsp.pairing).
    appended = text.replace("int z;\n", "int z;\nint mine;\n")
    assert find_intents(appended)[0].region.missing_end is not None
