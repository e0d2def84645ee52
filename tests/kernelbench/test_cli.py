"""`dice kernelbench` as a real process: exit codes, one-line messages, the JSON report."""

from __future__ import annotations

import json
import subprocess
import sys

from .conftest import TASKS


def dice(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dice_engine", "kernelbench", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_served_task_exits_0_and_writes_beside_the_task(tmp_path):
    task = tmp_path / "scaled_relu.py"
    task.write_text((TASKS / "scaled_relu.py").read_text())
    done = dice(str(task), "--budget", "1")
    assert done.returncode == 0, done.stderr
    written = tmp_path / "scaled_relu_dice.py"
    assert written.exists() and "class ModelNew(Model):" in written.read_text()
    assert "k0_map: fused aten.leaky_relu + aten.mul + aten.add" in done.stdout


def test_json_report_lists_kernels_and_fusion(tmp_path):
    out = tmp_path / "new.py"
    done = dice(str(TASKS / "linear_gelu.py"), "-o", str(out), "--budget", "1", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "ok" and report["output"] == str(out) and report["arch"] == "sm_90"
    assert [k["fused"] for k in report["kernels"]] == [
        ["aten.linear", "aten.mul", "aten.gelu"],
        ["aten.softmax"],
    ]
    assert report["kernels"][0]["result"]["resources"]["registers"] > 0


def test_unmapped_operator_exits_1_with_op_and_line(tmp_path):
    done = dice(str(TASKS / "unmapped_lgamma.py"), "-o", str(tmp_path / "x.py"))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "aten.lgamma at line 11 of forward" in lines[0]
    assert not (tmp_path / "x.py").exists()


def test_unmapped_operator_in_json(tmp_path):
    done = dice(str(TASKS / "unmapped_lgamma.py"), "-o", str(tmp_path / "x.py"), "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert (report["status"], report["op"], report["line"]) == ("error", "aten.lgamma", 11)


def test_not_a_task_exits_1_with_one_line(tmp_path):
    done = dice(str(TASKS / "not_a_task.py"), "-o", str(tmp_path / "x.py"))
    assert done.returncode == 1
    assert (
        done.stderr.count("\n") == 1 and "defines no Model" in done.stderr and "Traceback" not in done.stderr
    )


def test_usage_errors_exit_2(tmp_path):
    assert dice(str(TASKS / "scaled_relu.py"), "--arch", "sm_12345").returncode == 2
    assert dice(str(tmp_path / "missing.py")).returncode == 2
    assert dice("--eval", str(TASKS / "scaled_relu.py")).returncode == 2
    assert dice(str(TASKS / "scaled_relu.py"), "--budget", "0").returncode == 2


def test_eval_of_missing_file_is_one_line(tmp_path):
    done = dice("--eval", str(TASKS / "scaled_relu.py"), str(tmp_path / "nope.py"))
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "no such file" in done.stderr
