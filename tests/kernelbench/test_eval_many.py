"""`evaluate_many`: many (task, ModelNew) pairs through as few evaluation processes as is safe.
Without a GPU every pair gets the child's one-line reason; with one, a pair that patched torch,
changed a global numeric flag or hung is followed by a fresh process, and the pairs after it
are still evaluated."""

from __future__ import annotations

import pytest
import torch

from dice_engine.kernelbench.evaluate import evaluate_many

from .conftest import CHEATS, TASKS

RELU = str(TASKS / "relu_rand.py")


def _pair(cheat: str) -> tuple[str, str]:
    return RELU, str(CHEATS / f"{cheat}.py")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-GPU answer")
def test_without_a_gpu_every_pair_gets_one_reason():
    seen: list[int] = []
    results = evaluate_many([_pair("honest_torch")] * 3, trials=2, on_result=lambda i, r: seen.append(i))
    assert seen == [0, 1, 2]
    for r in results:
        assert r is not None and r["status"] == "error" and r["correct"] is False
        assert r["message"] == "no CUDA GPU visible to torch"


def test_a_time_budget_already_spent_starts_nothing():
    results = evaluate_many([_pair("honest_torch")] * 2, trials=2, time_budget=-1.0)
    assert results == [None, None]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs torch with a CUDA GPU")
def test_a_tainted_or_stuck_pair_gets_a_fresh_process_for_the_rest():
    names = ["honest_torch", "honest_torch", "patched_timer", "honest_torch", "sets_tf32", "honest_torch",
             "hangs", "honest_torch"]
    results = evaluate_many([_pair(n) for n in names], trials=5, timeout=60)
    by_name = list(zip(names, results))
    for name, r in by_name:
        assert r is not None, name
    honest = [r for n, r in by_name if n == "honest_torch"]
    assert all(r["correct"] for r in honest), [r["message"] for r in honest]
    assert "torch.cuda.Event.elapsed_time" in results[2]["message"] and not results[2]["correct"]
    assert results[4]["correct"]  # correct, but its process is not used again
    assert results[6]["status"] == "error" and "ran over 60 s" in results[6]["message"]
    process = [r.get("process") for r in results]
    assert process[0] == process[1] == process[2]  # clean pairs share a process
    assert len({process[2], process[3], process[5], process[7]}) == 4  # a new one after each taint
