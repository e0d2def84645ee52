"""Intents asking for what DICE cannot generate get words that say so: the operation by name and
what DICE does generate, the valid arguments of a function, the size of tensors no GPU holds."""
from __future__ import annotations

import pytest

from dice_engine.intent import IntentError, parse_intent


def error(intent: str) -> tuple[str, str]:
    with pytest.raises(IntentError) as caught:
        parse_intent(intent)
    e = caught.value
    return e.message, intent[e.start:e.end]


@pytest.mark.parametrize("intent, underlined, what", [
    ("y = topk(x, k=8, dim=1); x: f32[4096, 1024]", "topk", "top-k selection"),
    ("y = sort(x, dim=1); x: f32[4096, 1024]", "sort", "sorting"),
    ("top-k of a 4096x1024 fp32 matrix, k=8", "top-k", "top-k selection"),
    ("the 8 largest values per row (top k) of a 4096x1024 fp32 matrix", "top k", "top-k selection"),
    ("对4096x1024的矩阵求前k个最大值", "前k个", "top-k selection"),
    ("sort each row of a 4096x1024 fp32 matrix", "sort", "sorting"),
])
def test_unsupported_operations_are_named_with_what_dice_generates(intent, underlined, what):
    message, span = error(intent)
    assert span == underlined
    assert f"({what}) is not supported yet" in message
    assert "softmax" in message and "matmul" in message and "did you mean" not in message


@pytest.mark.parametrize("intent, underlined", [
    ("fused attention of q, k, v 1024x64 fp16", "fused attention"),
    ("对q、k、v做注意力计算，fp16", "注意力"),
])
def test_operations_the_tensor_form_serves_point_there_from_words(intent, underlined):
    message, span = error(intent)
    assert span == underlined
    assert "not understood in words yet" in message and "scaled_dot_product_attention(" in message


def test_the_same_operations_written_as_torch_calls_are_left_to_a_model():
    # PyTorch's own spelling is an opaque torch expression that a configured model may serve
    assert parse_intent("y = torch.sort(x, dim=1).values; x: f32[4096, 1024]").output.op == "torch"
    message, _ = error("y = torch.sort(x, dim=1); x: f32[4096, 1024]")
    assert "not a tensor" in message and ".values" in message


def test_a_misspelling_still_gets_its_suggestion_and_short_names_are_not_suggested():
    assert error("y = softmx(x, dim=1); x: f32[4096, 1024]")[0].endswith("did you mean softmax?")
    message, _ = error("y = frobnicate(x); x: f32[4096]")
    assert "unknown function 'frobnicate'" in message and "DICE generates" in message
    assert "did you mean to?" not in error("y = topq(x); x: f32[4096]")[0]


def test_a_wrong_argument_lists_the_valid_ones():
    message, span = error("y = layer_norm(x, dim=1); x: f32[4096, 1024]")
    assert span == "dim=1"
    assert message == ("layer_norm has no argument 'dim' "
                       "(layer_norm's arguments: normalized_shape, weight, bias, eps)")


def test_attention_scores_are_still_a_softmax():
    program = parse_intent("softmax over attention scores, 4096x1024 fp16")
    assert program.output.op == "softmax"


@pytest.mark.parametrize("intent, underlined, total", [
    ("y = relu(x); x: f32[100000000000]", "x: f32[100000000000]", "800 GB"),
    ("y = relu(a) + b; a, b: f32[N, 1000000]; N=100000", "a, b: f32[N, 1000000]", "1.2 TB"),
    ("relu of a 100000000000-element fp32 vector", "100000000000", "800 GB"),
])
def test_tensors_no_gpu_holds_are_refused_with_their_size(intent, underlined, total):
    message, span = error(intent)
    assert span == underlined
    assert message.startswith(f"these tensors need {total}") and "192 GB" in message


def test_sizes_that_fit_or_are_bound_at_run_time_pass():
    parse_intent("y = relu(x); x: f32[N]")
    parse_intent("C = A @ B; A: f16[65536, 65536]; B: f16[65536, 65536]")   # 25.8 GB in all
    with pytest.raises(IntentError, match="these tensors need"):
        parse_intent("y = relu(x); x: f32[N]", N=10**11)


@pytest.mark.parametrize("intent, underlined, suggestion", [
    ("y = softmx(x, dim=1); x: f32[4096, 1024]", "softmx", "softmax"),
    ("y = relu(x); x: f33[4]", "f33", "f32"),
    ("y = relu(xx); x: f32[4]", "xx", "x"),
    ("y = frobnicate(x); x: f32[4]", "frobnicate", None),
    ("y = topk(x, k=8, dim=1); x: f32[4096, 1024]", "topk", None),
])
def test_a_misspelling_carries_its_replacement_for_a_quick_fix(intent, underlined, suggestion):
    with pytest.raises(IntentError) as caught:
        parse_intent(intent)
    e = caught.value
    assert intent[e.start:e.end] == underlined and e.suggestion == suggestion
