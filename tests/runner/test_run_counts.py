"""Timed runs per candidate: 50 for short kernels, fewer (never under 10) for long ones."""
from __future__ import annotations

import fake_cuda
from fake_cuda import install

from dice_engine.runner.device import MIN_RUNS, DeviceSession, run_counts


def test_short_calls_keep_the_requested_runs():
    assert run_counts(20e-6, 50, 5) == (5, 50)
    assert run_counts(0.0, 50, 5) == (5, 50)


def test_long_calls_are_timed_for_about_a_quarter_second():
    assert run_counts(0.012, 50, 5) == (4, 20)
    assert run_counts(0.2, 50, 5) == (2, MIN_RUNS)
    assert run_counts(3.0, 50, 5) == (2, MIN_RUNS)


def test_the_session_sizes_its_runs_from_the_first_one(monkeypatch):
    install(monkeypatch)
    monkeypatch.setattr(fake_cuda.Event, "time_since", lambda self, other: 25.0)   # 25 ms a run
    session = DeviceSession(0)
    calls: list[int] = []
    times = session.time_us(lambda: calls.append(1), runs=50, warmup=5)
    assert len(times) == MIN_RUNS and all(t == 25000.0 for t in times)
    assert len(calls) == 2 + MIN_RUNS          # one sizing run, one more warm-up, the timed runs
