"""The warm pool's process isolation, against a FAKE child (fake_child.py) because CI has no
GPU: hangs, crashes, garbage replies and lost contexts become verdicts, the child is replaced,
and the next candidate is served. Also the no-GPU path."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from dice_engine.ir import ops
from dice_engine.ir.dtypes import F32
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.patterns import classify
from dice_engine.runner import GpuRunner, pool
from dice_engine.sketches.base import RenderedKernel, launcher_params

FAKE = [sys.executable, str(Path(__file__).with_name("fake_child.py"))]


def problem():
    x = ops.input_tensor("x", F32, ("N",))
    program = Program({"x": TensorDecl("x", F32, ("N",))}, "y", ops.make("relu", [x]), {"N": 1000})
    return classify(program)


def rendered(prob) -> RenderedKernel:
    return RenderedKernel("fake", {}, "", [], "fake_launch", launcher_params(prob), [], "fake")


def run(runner: GpuRunner, kind: str):
    prob = problem()
    return runner.run_library(f"/nowhere/{kind}.so", "fake_launch", rendered(prob), prob, time=True)


@pytest.fixture
def fake(monkeypatch, tmp_path):
    monkeypatch.setenv("DICE_CACHE_DIR", str(tmp_path))     # ceilings are cached per machine
    made = GpuRunner(child_command=FAKE, kernel_timeout_s=1.0, host_timeout_s=10.0, startup_timeout_s=10.0)
    yield made
    made.close()


def test_a_hang_is_a_timeout_and_the_next_candidate_is_served(fake):
    first = run(fake, "ok")
    report = run(fake, "hang")
    assert (report.verdict, report.verified) == ("timeout", False)
    assert "killed" in report.detail
    after = run(fake, "ok")
    assert after.verified and after.detail != first.detail      # a fresh child (another pid)
    assert fake.restarts == 1


@pytest.mark.parametrize("kind, verdict, words", [
    ("crash", "crash", "exited with status 3"),
    ("garbage", "crash", "not a pickle"),
    ("lost", "fault", "illegal address"),
])
def test_a_broken_child_is_replaced(fake, kind, verdict, words):
    assert run(fake, "ok").verified
    report = run(fake, kind)
    assert report.verdict == verdict and words in report.detail
    assert fake.restarts == 1
    assert run(fake, "ok").verified


def test_host_work_gets_the_long_timeout_and_kernels_the_short_one(fake):
    assert run(fake, "slow_host").verified       # 1.5 s of host work > the 1 s kernel timeout


def test_reports_carry_the_pool_overhead_and_rates(fake):
    report = run(fake, "ok")
    assert report.overhead_ms is not None and report.overhead_ms < 1000
    # relu over 1000 f32: 8000 bytes in 100 µs; the fake machine copies at 1000 GB/s
    assert report.gbps == pytest.approx(0.08)
    assert report.roofline_fraction == pytest.approx(8000 / 1000e9 / 100e-6)
    assert fake.ping() is not None
    assert fake.stats()["candidates"] == 1


@pytest.mark.parametrize("hello, startup_s, words", [("nogpu", 60.0, "no CUDA device"),
                                                     ("silent", 2.0, "did not start")])
def test_a_child_without_a_gpu_makes_the_runner_unavailable(monkeypatch, hello, startup_s, words):
    monkeypatch.setenv("FAKE_HELLO", hello)
    runner = GpuRunner(child_command=FAKE, startup_timeout_s=startup_s, spares=0)
    try:
        assert runner.available() is False
        report = run(runner, "ok")
        assert (report.verdict, report.verified) == ("no-gpu", None)
        assert words in report.detail
    finally:
        runner.close()


def test_without_pycuda_the_runner_says_so_once(monkeypatch, caplog):
    monkeypatch.setattr(pool.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(pool, "_said_no_gpu", False)
    caplog.set_level(logging.WARNING, logger="dice.runner")
    runner = GpuRunner()
    assert not runner.available() and not runner.available()
    report = runner.evaluate(rendered(problem()), problem(), "sm_90")
    assert report.verdict == "no-gpu" and "pycuda" in report.detail
    assert sum("no GPU runner" in r.message for r in caplog.records) == 1
