"""benchmarks/gemm_parity.py without a GPU: its refusal, its cases, and its child handling (a real
child process that answers, hangs or dies stands in for the GPU child)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gemm_parity.py"


def _module():
    spec = importlib.util.spec_from_file_location("gemm_parity", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gemm_parity"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_without_cuda_it_says_so_in_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "P.md"
    done = _run(
        "--out", str(out), "--cases", "kb1_square", env={"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin"}
    )
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gemm_parity.py: needs a CUDA GPU")
    assert not out.exists()


def test_an_unknown_case_is_a_usage_error():
    done = _run("--cases", "kb1_square,nonsense")
    assert done.returncode == 2 and "no case matches: nonsense" in done.stderr


def test_the_cases_are_level_one_matrix_products_at_their_shapes():
    module = _module()
    names = [c.name for c in module.CASES]
    assert len(set(names)) == len(names)
    for case in module.CASES:
        assert classify(parse_intent(case.intent)).anchor.op == "matmul", case.name
    by_name = {c.name: c.intent for c in module.CASES}
    assert "f32[256, 524288]" in by_name["kb6_large_k"] and "f32[1048576, 1]" in by_name["kb4_gemv"]
    assert "f32[8205, 2949]" in by_name["kb8_irregular"] and by_name["kb16_At_B"].startswith("C = A.T @ B;")
    assert [c.name for c in module.select_cases("bf16")] == ["bf16_square", "bf16_rect", "bf16_batched"]


FAKE_CHILD = textwrap.dedent("""
    import json, sys, time
    for job in json.load(open(sys.argv[1])):
        print(json.dumps({"event": "start", "case": job["case"]}), flush=True)
        if job["case"] == "hangs":
            time.sleep(60)
        if job["case"] == "dies":
            print("boom", file=sys.stderr, flush=True)
            sys.exit(3)
        print(json.dumps({"event": "done", "case": job["case"], "verdict": "ok", "dice_us": 10.0,
                          "torch_us": 9.0, "dice_err": 2e-7, "torch_err": 1e-7}), flush=True)
""")


def _rows(module, *names: str):
    return [
        module.Row(n, "KB 0", "C = A @ B", library=f"/lib/{n}.so", symbol="s", roles=["input"], names=["A"])
        for n in names
    ]


def test_a_hung_or_dead_case_costs_only_itself(tmp_path):
    module = _module()
    child = tmp_path / "child.py"
    child.write_text(FAKE_CHILD)
    rows = _rows(module, "first", "hangs", "middle", "dies", "last")
    seen: list[str] = []
    module.run_cases(
        rows,
        command=lambda path: [sys.executable, str(child), str(path)],
        case_timeout=3.0,
        ends_at=time.monotonic() + 60,
        workdir=tmp_path,
        on_row=lambda r: seen.append(r.case),
    )
    verdicts = {r.case: r.verdict for r in rows}
    assert verdicts == {"first": "ok", "hangs": "timeout", "middle": "ok", "dies": "crash", "last": "ok"}
    assert seen == ["first", "hangs", "middle", "dies", "last"]
    assert "boom" in rows[3].detail and rows[0].of_library == 0.9
    module.write(rows, {"date": "d", "gpu": "g", "torch": "t", "arch": "sm_90"}, tmp_path / "R.md")
    table = (tmp_path / "R.md").read_text()
    assert "| first | KB 0 |" in table and "timeout: no result within 3 s" in table
    data = json.loads((tmp_path / "R.json").read_text())
    assert [r["verdict"] for r in data["rows"]] == ["ok", "timeout", "ok", "crash", "ok"]


def test_no_case_starts_after_the_time_budget(tmp_path):
    module = _module()
    child = tmp_path / "child.py"
    child.write_text(FAKE_CHILD)
    rows = _rows(module, "first", "second")
    module.run_cases(
        rows,
        command=lambda path: [sys.executable, str(child), str(path)],
        case_timeout=3.0,
        ends_at=time.monotonic(),
        workdir=tmp_path,
        on_row=lambda r: None,
    )
    assert [(r.verdict, r.detail) for r in rows] == [("not run", "time budget spent")] * 2


def test_the_error_is_the_normwise_float64_error_summed_slice_by_slice():
    torch = pytest.importorskip("torch")
    truth = torch.randn(1000, 300, dtype=torch.float64)
    out = (truth * (1 + 1e-4)).float()
    whole = float((out.double() - truth).norm() / truth.norm())
    assert abs(_module()._relative_error(out, truth, chunk=7777) - whole) < 1e-12
