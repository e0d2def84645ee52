"""Device-side verification on a real GPU: the runner child checks on the device when torch
with CUDA is there, reaches the same verdicts as the host checks, and spends far less time on
inputs, reference and comparison for a large problem."""
from __future__ import annotations

import os

import pytest

from dice_engine.runner import GpuRunner
from planted import planted, problem

pytestmark = pytest.mark.gpu

BIG = 1 << 27          # 512 MiB per f32 tensor: the host path's copies and numpy work show


def _runner(monkeypatch, checks: str) -> GpuRunner:
    monkeypatch.setenv("DICE_RUNNER_CHECKS", checks)
    runner = GpuRunner(kernel_timeout_s=20.0, spares=0, seed=5)
    if not runner.available():
        runner.close()
        pytest.skip("no GPU runner")
    return runner


def _check_stages(runner: GpuRunner) -> float:
    stages = runner.stats()["stages_s"]
    return sum(stages.get(s, 0.0) for s in ("inputs", "reference", "check"))


@pytest.mark.parametrize("checks", ["cuda:0", "host"])
@pytest.mark.parametrize("kind, verdict", [("good", "ok"), ("wrong", "mismatch"),
                                           ("half_written", "unwritten"), ("overrun", "out-of-bounds")])
def test_both_checks_reach_the_same_verdicts(monkeypatch, checks, kind, verdict):
    runner = _runner(monkeypatch, checks)
    try:
        report = runner.evaluate(planted(kind), problem(), "sm_90", time=False)
        assert report.verdict == verdict, report.detail
    finally:
        runner.close()


def test_device_checks_are_chosen_by_default_and_scale(monkeypatch, capsys):
    monkeypatch.delenv("DICE_RUNNER_CHECKS", raising=False)
    times = {}
    for checks in ("", "host"):
        if checks:
            monkeypatch.setenv("DICE_RUNNER_CHECKS", checks)
        runner = GpuRunner(kernel_timeout_s=20.0, spares=0, seed=5)
        try:
            report = runner.evaluate(planted("good", problem(BIG)), problem(BIG), "sm_90", time=True)
            assert report.verdict == "ok", report.detail
            times[checks or "default"] = _check_stages(runner)
            with capsys.disabled():
                print(f"\n{checks or 'default'} checks at N={BIG}: {runner.stats()['stages_s']}")
        finally:
            runner.close()
    assert os.environ.get("DICE_RUNNER_CHECKS") == "host"
    assert times["default"] * 5 < times["host"], times
