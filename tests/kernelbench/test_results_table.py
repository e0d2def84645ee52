"""The KernelBench results table (scripts/kernelbench_results.py): every row has an outcome, rows
not yet evaluated are not counted as wrong, and the summary counts what it says."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "kernelbench_results.py"


def _script():
    spec = importlib.util.spec_from_file_location("kernelbench_results", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(task: str, **ev) -> dict:
    return {"level": "level1", "task": task, "new": f"{task}_dice.py", "translated": True, "eval": ev}


def test_outcomes_and_summary():
    results = _script()
    fast = _row(
        "1_fast.py",
        correct=True,
        fast_1=True,
        speedup_eager=2.0,
        speedup_compile=0.5,
        time_new={"mean_ms": 1.0},
        time_eager={"mean_ms": 2.0},
        time_compile={"mean_ms": 0.5},
        float64={"err_new": 1e-6, "err_torch": 2e-6, "ok": True},
        device="GPU X",
    )
    slow = _row(
        "2_slow.py",
        correct=True,
        fast_1=False,
        speedup_eager=0.5,
        time_new={"mean_ms": 4.0},
        time_eager={"mean_ms": 2.0},
        float64={"err_new": 1e-3, "err_torch": 1e-6, "ok": False},
    )
    wrong = _row("3_wrong.py", correct=False, message="correctness trial 1: wrong result")
    pending = {"level": "level1", "task": "4_pending.py", "new": "x", "translated": True}
    refused = {
        "level": "level1",
        "task": "5_refused.py",
        "new": "y",
        "translated": False,
        "message": "no mapping",
    }
    text = results.table([fast, slow, wrong, pending, refused], trials=100)
    lines = {line.split(" | ")[1]: line for line in text.splitlines() if line.startswith("| level1 | ")}
    assert "| fast_1 |" in lines["1_fast.py"] and "1e-06 (2e-06)" in lines["1_fast.py"]
    # new, eager and torch.compile times, then the speedups over each
    assert "| 1.0000 | 2.0000 | 0.5000 | 2.00 | 0.50 |" in lines["1_fast.py"]
    assert "| 4.0000 | 2.0000 |  | 0.50 |  |" in lines["2_slow.py"]
    assert "| correct |" in lines["2_slow.py"] and "✗" in lines["2_slow.py"]
    assert "| wrong |" in lines["3_wrong.py"]
    assert "| not evaluated |" in lines["4_pending.py"]
    assert "| not translated |" in lines["5_refused.py"] and "no mapping" in lines["5_refused.py"]
    summary = next(line for line in text.splitlines() if line.startswith("| level1 | 5 |"))
    # tasks, translated, evaluated, correct, fast_1, fast_1 %, float64 within, geomeans
    assert summary.split(" | ")[1:8] == ["5", "4", "3", "2", "1", "20%", "1"]
    assert "1.00x (2)" in summary and "0.50x (1)" in summary
    assert "GPU X" in text


def test_geomean_of_nothing_is_not_a_number():
    assert _script()._geomean([None, None]) == "n/a"
