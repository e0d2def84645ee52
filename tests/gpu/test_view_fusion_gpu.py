"""Views fused into the linear-offset prologues and epilogues (scan, transpose, pool, convolution)
on a GPU: the emulated cases of tests/sketches/test_view_fusion.py checked by the runner against
the reference on fresh inputs with poisoned outputs, and the level-1 exclusive cumsum's narrowed
row scan at its exact shape timed beside PyTorch. Skips without a GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dice_engine.arch import ARCHS
from dice_engine.ir import ops
from dice_engine.ir.dtypes import F32

sys.path.insert(0, str(Path(__file__).parents[1] / "sketches"))
from test_view_fusion import (BLOCK, CONV, POOL, TILED, WARP, conv_plus_padded_bias,  # noqa: E402
                              narrowed_row_scan, padded_pool, program, scan_plus_shifted,
                              strided_transpose)

pytestmark = pytest.mark.gpu
SM90 = ARCHS["sm_90"]


@pytest.mark.parametrize("sketch, build", [
    (WARP, narrowed_row_scan), (BLOCK, narrowed_row_scan), (WARP, scan_plus_shifted), (POOL, padded_pool),
    (TILED, strided_transpose), (CONV, conv_plus_padded_bias),
], ids=["warp-narrowed", "block-narrowed", "warp-shifted-epilogue", "pool-padded", "tiled-strided",
        "conv-padded-operand"])
def test_fused_views_are_correct_on_the_gpu(runner, sketch, build) -> None:
    problem = build()
    rendered = sketch.render(problem, SM90, sketch.default_point(problem, SM90), "views")
    report = runner.evaluate(rendered, problem, "sm_90", time=False)
    assert report.verdict == "ok", report.detail
    assert report.verified is True


def test_a_narrowed_row_scan_at_level_1_size(runner) -> None:
    x = ops.input_tensor("x", F32, (32768, 32768))
    problem = program(ops.make("cumsum", [ops.make("slice", [x], dim=1, start=0, end=32767)], dim=1), x)
    rendered = BLOCK.render(problem, SM90, BLOCK.default_point(problem, SM90), "narrowed")
    report = runner.evaluate(rendered, problem, "sm_90", time=True)
    assert report.verdict == "ok", report.detail
    print(f"\nnarrowed row scan 32768 x 32767: {report.time_us:.0f} us, "
          f"torch {report.reference_time_us:.0f} us")
