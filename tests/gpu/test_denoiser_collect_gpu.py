"""benchmarks/denoiser/collect.py on a GPU: a short collection measures verified designs, a
resumed one adds new ones only, and train.py and evaluate.py read what it wrote."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "benchmarks" / "denoiser"
STATUSES = {"ok", "mismatch", "unwritten", "out-of-bounds", "fault", "timeout", "crash", "launch-failure",
            "out-of-memory", "compile-error", "render-error", "cannot-launch", "guard"}


def _run(script: str, *args: str, timeout: float = 400) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / script), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def _keys(path: Path) -> list[tuple[str, str, str]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["shape_id"], r["sketch"], json.dumps(r["tokens"], sort_keys=True)) for r in rows]


@pytest.mark.gpu
def test_collect_measures_resumes_and_feeds_training(tmp_path):
    data = tmp_path / "d.jsonl"
    first = _run("collect.py", "--families", "row_sum", "--time-budget", "30", "--out", str(data))
    assert first.returncode == 0, first.stderr[-2000:]
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    assert len(rows) >= 10 and {r["status"] for r in rows} <= STATUSES
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) >= len(rows) // 2 and all(r["time_us"] > 0 and r["resources"] for r in ok)
    before = _keys(data)
    again = _run("collect.py", "--families", "row_sum", "--time-budget", "30", "--out", str(data), "--resume")
    assert again.returncode == 0, again.stderr[-2000:]
    after = _keys(data)
    assert after[:len(before)] == before and len(after) > len(before) and len(set(after)) == len(after)
    weights = tmp_path / "w.npz"
    trained = _run("train.py", "--data", str(data), "--out", str(weights), "--steps", "50")
    assert trained.returncode == 0 and weights.is_file(), trained.stderr[-2000:]
    evaluated = _run("evaluate.py", "--data", str(data), "--weights", str(weights), "--min-points", "4",
                     "--seeds", "1", "--out", str(tmp_path / "e.md"))
    assert evaluated.returncode in (0, 1) and "Traceback" not in evaluated.stderr, evaluated.stderr[-2000:]
