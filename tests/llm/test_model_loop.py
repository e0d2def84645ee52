"""The model loop end to end without a GPU: replies from the scripted server are extracted,
refused by the guards, compiled by the real nvcc, run through the static analyses, and fed
back; the accepted kernel is marked unverified."""
from __future__ import annotations

import shutil

import pytest
from replies import TOPK, kernel_reply

from dice_engine import CUDAGenerator
from dice_engine.api import UNVERIFIED_MODEL_KERNEL, GenerationError
from dice_engine.llm import LLMConfig

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


def generator(url: str, **kw) -> CUDAGenerator:
    return CUDAGenerator("sm_90", default_shape=None, llm=LLMConfig(base_url=url, model="scripted", **kw))


def last_user_message(request: dict) -> str:
    return request["body"]["messages"][-1]["content"]


def test_a_correct_first_reply_is_accepted_and_marked_unverified(scripted_model):
    model = scripted_model([kernel_reply("topk_good")])
    result = generator(model.url).generate(TOPK)
    assert result.model == "scripted" and result.verified is None and result.time_us is None
    assert "torch_f32_256x4_launch" in result.launcher and "__global__" in result.kernel
    assert UNVERIFIED_MODEL_KERNEL in result.summary
    assert result.resources["registers"] > 0                   # ptxas figures of the model's kernel
    assert any("NOT VERIFIED" in line for line in result.report())
    (request,) = model.requests()
    prompt = last_user_message(request)
    assert 'extern "C" void torch_f32_256x4_launch(const float* x, float* y, cudaStream_t stream)' in prompt
    assert "torch.topk(x, 4, dim=1).values" in prompt and "sm_90" in prompt and "default stream" in prompt


def test_a_reply_that_does_not_compile_is_repaired_with_nvccs_errors(scripted_model):
    model = scripted_model([kernel_reply("topk_compile_error"), kernel_reply("topk_simple")])
    result = generator(model.url).generate(TOPK)
    assert result.round == 1
    first, second = model.requests()
    feedback = last_user_message(second)
    assert 'nvcc: line 16: identifier "vals" is undefined' in feedback
    assert second["body"]["messages"][-2]["role"] == "assistant"     # the bad reply, for context


def test_a_race_the_analyses_catch_is_fed_back(scripted_model):
    model = scripted_model([kernel_reply("topk_race"), kernel_reply("topk_simple")])
    result = generator(model.url).generate(TOPK)
    assert result.round == 1
    assert "DICE-R001 (race)" in last_user_message(model.requests()[1])


def test_a_cheating_kernel_is_refused_before_compiling(scripted_model):
    model = scripted_model([kernel_reply("cheat_side_stream"), kernel_reply("topk_simple")])
    generator(model.url).generate(TOPK)
    feedback = last_user_message(model.requests()[1])
    assert "refused: the code uses another stream" in feedback and "cudaStreamCreateWithFlags" in feedback


def test_after_the_last_round_the_reason_is_one_line(scripted_model):
    model = scripted_model([{"content": "I cannot help with that."}, kernel_reply("topk_compile_error")])
    with pytest.raises(GenerationError) as info:
        generator(model.url, rounds=2).generate(TOPK)
    message = str(info.value)
    assert message.startswith("the model gave no acceptable kernel in 3 rounds; last: nvcc: line 16")
    assert "\n" not in message and len(model.requests()) == 3
    assert "holds no CUDA code" in last_user_message(model.requests()[1])


def test_off_never_asks_and_fallback_leaves_served_intents_to_dice(scripted_model):
    model = scripted_model([kernel_reply("topk_good")])
    with pytest.raises(GenerationError, match="only a model can write"):
        generator(model.url, use="off").generate(TOPK)
    result = generator(model.url).generate("y = relu(x); x: f32[4096]", budget=2)
    assert result.model is None
    assert model.requests() == []


def test_compete_without_a_gpu_keeps_dices_kernel_and_says_why(scripted_model):
    model = scripted_model([kernel_reply("topk_good")])
    result = generator(model.url, use="compete").generate("y = relu(x); x: f32[4096]", budget=2)
    assert result.model is None and any("cannot be compared" in n for n in result.notes)
    assert model.requests() == []


def test_an_unreachable_model_is_a_generation_error():
    with pytest.raises(GenerationError, match="cannot reach the model"):
        generator("http://127.0.0.1:9/v1", timeout_s=2).generate(TOPK)
