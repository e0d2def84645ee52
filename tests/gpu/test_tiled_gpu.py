"""The general lowering's tiled schedule on a GPU: every tiled case checked by the runner
against PyTorch's meaning on fresh random inputs with poisoned outputs, and KernelBench-sized
contractions timed beside PyTorch eager (tile 0 against 32 and 64). Skips without a GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.lowering import GeneralLowering

sys.path.insert(0, str(Path(__file__).parents[1] / "lowering"))
sys.path.insert(0, str(Path(__file__).parents[1] / "sketches"))
from test_tiled_emulated import TILED_CASES, tiled_point  # noqa: E402
from test_tiled_nvcc import LARGE  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("intent", TILED_CASES, ids=[c[:50] for c in TILED_CASES])
@pytest.mark.parametrize("tile, threads", [(32, 64), (32, 256), (64, 256)])
def test_tiled_kernel_is_correct_on_the_gpu(runner, intent: str, tile: int, threads: int) -> None:
    problem = classify(parse_intent(intent))
    rendered = GeneralLowering().render(problem, ARCHS["sm_90"], tiled_point(tile, threads), "tiled")
    report = runner.evaluate(rendered, problem, "sm_90", time=False)
    assert report.verdict == "ok", report.detail
    assert report.verified is True


@pytest.mark.parametrize("intent", LARGE, ids=["matmul4d", "conv3d", "conv_transpose2d"])
def test_tiled_kernels_at_kernelbench_sizes_are_correct_and_faster_than_per_output(
    runner, intent: str
) -> None:
    problem = classify(parse_intent(intent))
    times = {}
    for tile in (0, 32, 64):
        rendered = GeneralLowering().render(problem, ARCHS["sm_90"], tiled_point(tile, 256), "tiled")
        report = runner.evaluate(rendered, problem, "sm_90", time=True)
        assert report.verdict == "ok", (tile, report.detail)
        times[tile] = report.time_us
        print(f"\n{intent[:60]} tile={tile}: {report.time_us} us, torch eager {report.reference_time_us} us")
    assert min(times[32], times[64]) < times[0]
