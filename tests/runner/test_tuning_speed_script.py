"""benchmarks/tuning_speed.py without a GPU: clear one-line refusals, and its interval sums."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dice_engine.runner import GpuRunner

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "tuning_speed.py"


def _module():
    spec = importlib.util.spec_from_file_location("tuning_speed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["tuning_speed"] = module          # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_an_unknown_case_is_a_usage_error():
    done = _run("--cases", "gemm_4096,nonsense")
    assert done.returncode == 2 and done.stderr.strip() == "tuning_speed.py: unknown case(s): nonsense"


def test_without_a_gpu_it_says_so_in_one_line(tmp_path):
    done = _run("--out", str(tmp_path / "r.json"), "--cases", "relu_4096x393216")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("tuning_speed.py: no GPU runner")
    assert not (tmp_path / "r.json").exists()


def test_compile_wall_time_is_the_union_of_overlapping_calls():
    intervals = _module().Intervals()
    intervals.spans = [(0.0, 2.0), (1.0, 3.0), (5.0, 6.0), (5.5, 5.75)]
    assert intervals.union() == 4.0 and intervals.summed() == 5.25


def test_the_default_cases_are_the_ones_the_issue_names_and_dice_parses_them():
    module = _module()
    from dice_engine.intent import parse_intent
    from dice_engine.ir.patterns import classify

    patterns = {classify(parse_intent(module.CASES[name])).pattern for name in module.DEFAULT_CASES}
    assert {"gemm", "elementwise", "softmax", "reduction", "norm"} <= patterns
    assert "f32[4096, 393216]" in module.CASES["relu_4096x393216"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) not installed")
def test_a_case_runs_the_search_with_a_runner_and_splits_its_time(tmp_path, monkeypatch):
    """A fake runner child (no GPU here) answers every candidate; nvcc, the search, the runner's
    library builds and the bookkeeping are real."""
    monkeypatch.setenv("DICE_CACHE_DIR", str(tmp_path))
    fake = [sys.executable, str(Path(__file__).with_name("fake_child.py"))]
    module = _module()
    row = module.run_case("tiny", "y = relu(x); x: f32[65536]", "sm_90", 2, 60.0,
                          make_runner=lambda: GpuRunner(child_command=fake, spares=0))
    assert row.note == "" and row.verified is True and row.time_us == 100.0
    assert row.candidates == 2 and row.stages_s["build"] > 0 and "transfer" in row.stages_s
    assert 0 < row.compile_wall_s <= row.nvcc_s and row.total_s >= row.startup_s > 0
    assert "| tiny |" in module.table([row], "Fake GPU", 2)
