"""The general lowering's kernels run on a GPU and checked against the float64 reference on
fresh random inputs with poisoned outputs (the runner's protocol, in a child process with a
timeout), at every reduction strategy. Skips cleanly without a GPU."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.lowering import GeneralLowering

sys.path.insert(0, str(Path(__file__).parents[1] / "sketches"))
from lowering_cases import EMULATED_CASES, lowering_point  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("intent", [c[0] for c in EMULATED_CASES], ids=[c[0][:50] for c in EMULATED_CASES])
@pytest.mark.parametrize("strategy", ["thread", "warp", "block", "split"])
@pytest.mark.parametrize("fuse", ["kernels", "block", "thread"])
def test_lowered_kernel_is_correct_on_the_gpu(runner, intent: str, strategy: str, fuse: str) -> None:
    problem = classify(parse_intent(intent))
    sketch = GeneralLowering()
    space = sketch.space(problem, ARCHS["sm_90"])
    if fuse not in space.token("fuse").choices:
        pytest.skip(f"no one-kernel normalisation with fuse={fuse} here")
    point = lowering_point(space, threads=128, strategy=strategy, items=2, unroll=2, fuse=fuse, tile=0)
    rendered = sketch.render(problem, ARCHS["sm_90"], point, "lowered")
    report = runner.evaluate(rendered, problem, "sm_90", time=False)
    assert report.verdict == "ok", report.detail
    assert report.verified is True
