"""The runner on a real GPU: planted failures are reported as such and the pool keeps serving."""
from __future__ import annotations

import pytest

from planted import planted, problem

pytestmark = pytest.mark.gpu


def test_good_kernel_is_verified_and_timed(runner):
    report = runner.evaluate(planted("good"), problem(), "sm_90")
    assert report.verdict == "ok", report.detail
    assert report.verified is True
    assert len(report.shapes) == 2          # the intent's N and an odd N
    assert report.time_us and report.time_us > 0
    assert report.gbps and report.gbps > 0
    assert report.overhead_ms is not None


@pytest.mark.parametrize("kind, verdict, words", [
    ("wrong", "mismatch", "exceeds"),
    ("half_written", "unwritten", "not written"),
    ("overrun", "out-of-bounds", "out of bounds of 'y'"),
    ("launch_failure", "launch-failure", "at launch"),
    ("fault", "fault", "illegal"),
    ("hang", "timeout", "killed"),
])
def test_planted_failure_is_named_and_the_runner_keeps_serving(runner, kind, verdict, words):
    report = runner.evaluate(planted(kind), problem(), "sm_90", time=False)
    assert (report.verdict, report.verified) == (verdict, False), report.detail
    assert words in report.detail
    after = runner.evaluate(planted("good"), problem(), "sm_90", time=False)
    assert after.verdict == "ok", after.detail


def test_huge_allocation_is_a_clean_verdict(runner):
    report = runner.evaluate(planted("good"), problem(n=1 << 40), "sm_90", time=False)
    assert report.verdict == "out-of-memory", report.detail
    assert runner.evaluate(planted("good"), problem(), "sm_90", time=False).verified


def test_warm_pool_overhead_is_small(runner):
    runner.evaluate(planted("good"), problem(), "sm_90", time=False)
    rtt = [runner.ping() for _ in range(20)]
    assert all(t is not None for t in rtt)
    median = sorted(rtt)[len(rtt) // 2]
    print(f"warm pool round trip: median {median:.2f} ms; stats {runner.stats()}")
    assert median < 50.0


def test_ceilings_are_measured_and_cached(runner):
    ceilings = runner.ceilings()
    assert ceilings is not None and ceilings.copy_gbps > 100
    print(f"ceilings: {ceilings}")
