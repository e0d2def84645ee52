"""On a GPU: kernels the scripted model replies are verified against PyTorch's reference and
timed; the wrong one is rejected, the right one verified and timed, and each cheating one caught
(by the guards before it runs, or by the runner child while it runs). Skipped without a GPU."""
from __future__ import annotations

import shutil

import pytest
import torch
from replies import KERNELS, TOPK, kernel_reply

from dice_engine import CUDAGenerator
from dice_engine.api import GenerationError
from dice_engine.arch import resolve
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.llm import LLMConfig
from dice_engine.runner import GpuRunner
from dice_engine.sketches.base import RenderedKernel, launcher_params

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def runner():
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    gpu = GpuRunner(kernel_timeout_s=20.0, trials=5)
    if not gpu.available():
        gpu.close()
        pytest.skip("no GPU runner (no pycuda or no GPU)")
    yield gpu
    gpu.close()


def evaluate(runner: GpuRunner, name: str):
    program = parse_intent(TOPK)
    problem = classify(program)
    rendered = RenderedKernel(sketch="model:test", tokens={}, source=(KERNELS / f"{name}.cu").read_text(),
                              kernel_names=[], launcher="torch_f32_256x4_launch",
                              params=launcher_params(problem), launches=[], summary="")
    return runner.evaluate(rendered, problem, resolve("sm_90"))


@pytest.mark.parametrize("name", ["topk_good", "topk_simple"])
def test_right_kernels_are_verified_and_timed(runner, name):
    report = evaluate(runner, name)
    assert report.verdict == "ok" and report.verified, report.detail
    assert report.time_us is not None and report.time_us > 0


def test_the_wrong_kernel_is_rejected(runner):
    report = evaluate(runner, "topk_wrong")
    assert report.verdict == "mismatch" and not report.verified


@pytest.mark.parametrize("name,verdict,words", [
    ("cheat_side_stream", "guard", "uses another stream"),
    ("cheat_half_precision", "guard", "lower precision"),
    ("cheat_patched_timer", "guard", "defines CUDA API functions"),
    ("cheat_pointer_cache", "unwritten", "trial 2"),
    ("cheat_count_cache", "guard", "wrong after the timed runs"),
    ("cheat_mutates_input", "guard", "wrote into the input 'x'"),
])
def test_each_cheating_kernel_is_caught(runner, name, verdict, words):
    report = evaluate(runner, name)
    assert report.verdict == verdict and words in report.detail, (report.verdict, report.detail)


def generator(url: str, runner: GpuRunner, **kw) -> CUDAGenerator:
    return CUDAGenerator("sm_90", default_shape=None, runner=runner,
                         llm=LLMConfig(base_url=url, model="scripted", **kw))


def test_the_model_loop_verifies_and_times_the_right_kernel(runner, scripted_model):
    model = scripted_model([kernel_reply("topk_good")])
    result = generator(model.url, runner).generate(TOPK)
    assert result.verified is True and result.time_us > 0
    if torch.version.cuda is not None:                      # PyTorch's topk, timed beside it
        assert result.reference_time_us is not None
    assert "verified" in result.summary and "UNVERIFIED" not in result.summary


def test_the_model_loop_feeds_a_mismatch_back_and_gives_up(runner, scripted_model):
    model = scripted_model([kernel_reply("topk_wrong")])
    with pytest.raises(GenerationError, match="on the GPU: mismatch"):
        generator(model.url, runner, rounds=1).generate(TOPK)
    assert "on the GPU: mismatch" in model.requests()[1]["body"]["messages"][-1]["content"]


def test_the_model_loop_repairs_a_cheat_caught_at_run_time(runner, scripted_model):
    # A cheat without state of its own: a library loaded again in the same child keeps its statics.
    model = scripted_model([kernel_reply("cheat_mutates_input"), kernel_reply("topk_good")])
    result = generator(model.url, runner).generate(TOPK)
    assert result.verified is True and result.round >= 1
    assert "wrote into the input 'x'" in model.requests()[1]["body"]["messages"][-1]["content"]


def test_compete_asks_the_model_and_shows_its_kernel_only_when_measured_faster(runner, scripted_model):
    model = scripted_model([kernel_reply("relu_model")])
    results = list(generator(model.url, runner, use="compete").stream("y = relu(x); x: f32[1048576]",
                                                                       budget=4))
    assert model.requests()
    ours = [r for r in results if r.model is None]
    assert ours and all(r.verified for r in results)
    for theirs in (r for r in results if r.model is not None):
        assert theirs.time_us < ours[-1].time_us
