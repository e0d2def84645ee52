"""Whatever the text, parse_intent returns a program or raises IntentError with a valid range."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dice_engine.intent import IntentError, find_intents, parse_intent, region_edit
from dice_engine.intent.regions import apply_edit
from dice_engine.ir.graph import Program

FRAGMENTS = ["y", "=", "x", ":", "f32", "bf16", "[", "]", "(", ")", ",", ";", "\n", "@", "*", "**", ".T",
             "softmax", "sum", "dim", "=1", "-1", "4096", "1024x1024", "matmul", "矩阵乘法", "两个", "fp16",
             "relu", "conv2d", "max", "N", "arch=", "sm_80", "'", "\"", "1e-5", "keepdim=True", "A100",
             "计算能力8.0", "layer_norm", "permute", " ", "x4", "batched", "pooling", "3x3", "#", "×"]


def check(text: str) -> None:
    try:
        program = parse_intent(text)
    except IntentError as e:
        assert 0 <= e.start <= e.end <= len(text), (e.start, e.end, len(text))
        assert e.message
    else:
        assert isinstance(program, Program)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=80))
def test_arbitrary_text(text):
    check(text)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join))
def test_intent_like_text(text):
    check(text)


LINE_FRAGMENTS = ["// @dice: y = relu(x); x: f32[4]", "// more",
                  "// @dice-begin 0123456789ab s [body 0badc0de]", "// @dice-begin", "// @dice-end",
                  "int a;", "", "  ", "/*", "*/", "\"// @dice: x\"",
                  "__global__ void k() {", "}", "// 中文"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINE_FRAGMENTS), max_size=14), st.sampled_from(["\n", "\r\n"]),
       st.booleans())
def test_find_intents_never_raises_and_edits_stay_in_range(lines, newline, trailing):
    source = newline.join(lines) + (newline if trailing else "")
    sites = find_intents(source)
    for site in sites:
        edit = region_edit(source, site, "int generated;\n", "summary")
        written = apply_edit(source, edit)
        rescanned = find_intents(written)
        assert any(s.region is not None and s.region.summary == "summary" and not s.region.edited
                   for s in rescanned)
