"""The N-d implicit GEMM and the depthwise stencil on a GPU: the emulated cases and the sample
intents checked by the runner against PyTorch on fresh inputs (poisoned outputs), then
KernelBench level 1's convolution shapes checked and timed beside PyTorch eager and beside the
general lowering's default. Skips without a GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.lowering import GeneralLowering
from dice_engine.sketches import conv_depthwise, conv_nd
from dice_engine.sketches.conv_depthwise import DepthwiseConv
from dice_engine.sketches.conv_nd import ImplicitGemmConvNd

sys.path.insert(0, str(Path(__file__).parents[1] / "sketches"))
from test_conv_nd import KERNELBENCH  # noqa: E402

pytestmark = pytest.mark.gpu
SM90 = ARCHS["sm_90"]
SKETCHES = [ImplicitGemmConvNd(), DepthwiseConv()]


def _serving(text: str):
    problem = classify(parse_intent(text))
    sketch = next(s for s in SKETCHES if s.unsupported(problem, SM90) is None)
    return problem, sketch


@pytest.mark.parametrize("text", conv_nd.SAMPLE_INTENTS + conv_depthwise.SAMPLE_INTENTS)
def test_samples_are_correct_on_the_gpu(runner, text: str) -> None:
    problem, sketch = _serving(text)
    rendered = sketch.render(problem, SM90, sketch.default_point(problem, SM90), "conv")
    report = runner.evaluate(rendered, problem, "sm_90", time=False)
    assert report.verdict == "ok", report.detail
    assert report.verified is True


@pytest.mark.parametrize("text", KERNELBENCH, ids=[t.split(";")[0][4:40] for t in KERNELBENCH])
def test_kernelbench_shapes_are_correct_and_beat_the_general_lowering(runner, text: str) -> None:
    problem, sketch = _serving(text)
    rendered = sketch.render(problem, SM90, sketch.default_point(problem, SM90), "conv")
    report = runner.evaluate(rendered, problem, "sm_90", time=True)
    assert report.verdict == "ok", report.detail
    lowering = GeneralLowering()
    generic = lowering.render(problem, SM90, lowering.default_point(problem, SM90), "generic")
    baseline = runner.evaluate(generic, problem, "sm_90", time=True)
    print(f"\n{text[:70]}: {sketch.name} {report.time_us:.0f} us, generic.lowered {baseline.time_us:.0f} us, "
          f"torch eager {report.reference_time_us:.0f} us")
    assert report.time_us < baseline.time_us
