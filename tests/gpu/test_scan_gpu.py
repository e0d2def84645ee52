"""The one-pass chained row scan on a GPU, where blocks really run at once and wait on each
other's flags: checked by the runner against the reference on fresh inputs with poisoned outputs
at KernelBench level 1's size (32768 rows of 32768, four tiles a row), on a few rows of a million
(chains of hundreds of tiles), backwards, and as a cumprod; each timed beside PyTorch with the
three-pass multi-block scan it competes with. Skips without a GPU."""

from __future__ import annotations

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches.scan import ChainedRowScan, MultiBlockRowScan

pytestmark = pytest.mark.gpu
SM90 = ARCHS["sm_90"]
CHAINED, MULTI = ChainedRowScan(), MultiBlockRowScan()


@pytest.mark.parametrize("intent", [
    "y = cumsum(x, dim=1); x: f32[32768, 32768]",
    "y = cumsum(x, dim=1); x: f32[4, 1000000]",
    "y = flip(cumsum(flip(x, dims=[1]), dim=1), dims=[1]); x: f32[4096, 32768]",
    "y = cumprod(1.0 + 0.0001 * x, dim=1); x: f32[1024, 20000]",
    "y = cumsum(x, dim=1); x: bf16[512, 100003]",
], ids=["level1-size", "few-long-rows", "reverse", "cumprod-fused", "bf16-odd-length"])
def test_the_chained_scan_is_right_and_timed_beside_the_multi_block_scan(runner, intent) -> None:
    problem = classify(parse_intent(intent))
    times = {}
    for sketch in (CHAINED, MULTI):
        rendered = sketch.render(problem, SM90, sketch.default_point(problem, SM90), "scan")
        report = runner.evaluate(rendered, problem, "sm_90", time=True)
        assert report.verdict == "ok", (sketch.name, report.detail)
        assert report.verified is True
        times[sketch.name] = (report.time_us, report.reference_time_us)
    print(f"\n{intent}: " + ", ".join(f"{name} {ours:.0f} us (torch {torch:.0f} us)"
                                      for name, (ours, torch) in times.items()))
