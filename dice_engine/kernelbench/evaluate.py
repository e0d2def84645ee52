"""`dice kernelbench --eval`: KernelBench's protocol for a task and a ModelNew, in a child
process with a timeout (the solution's code never runs in this process)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


class EvalError(Exception):
    """The evaluation could not run (no GPU, a missing file, a timeout, a crash)."""


def evaluate(
    task: str,
    new: str,
    *,
    trials: int = 100,
    correctness_trials: int = 5,
    with_compile: bool = False,
    timeout: float = 900.0,
) -> dict[str, Any]:
    for path in (task, new):
        if not Path(path).is_file():
            raise EvalError(f"no such file: {path}")
    config = {"trials": trials, "correctness_trials": correctness_trials, "compile": with_compile}
    with tempfile.TemporaryDirectory(prefix="dice-kbeval-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [
            sys.executable,
            "-m",
            "dice_engine.kernelbench.eval_child",
            str(Path(task).resolve()),
            str(Path(new).resolve()),
            json.dumps(config),
            str(out),
        ]
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        try:
            _, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise EvalError(f"the evaluation ran over {timeout:.0f} s and was stopped") from None
        if not out.exists():
            last = [line for line in stderr.splitlines() if line.strip()]
            raise EvalError(
                f"the evaluation process died (exit {proc.returncode}): {last[-1] if last else 'no message'}"
            )
        result = json.loads(out.read_text())
    if "error" in result:
        raise EvalError(result["error"])
    return result


def format_result(r: dict[str, Any]) -> str:
    lines = [
        f"task      {r['task']}",
        f"device    {r.get('device', '?')}",
        f"correct   {'yes' if r['correct'] else 'no'}" + (f" ({r['message']})" if r.get("message") else ""),
    ]
    if "max_abs_diff" in r:
        lines.append(f"max diff  {r['max_abs_diff']:.3g}; seeded weights equal: {r.get('weights_equal')}")
    f64 = r.get("float64")
    if isinstance(f64, dict) and "err_new" in f64:
        lines.append(
            f"float64   error {f64['err_new']:.3g} vs a float64 truth (PyTorch's {f64['err_torch']:.3g}); "
            f"{'within' if f64['ok'] else 'NOT within'} max(tolerance, 2x PyTorch's)"
        )
    for key in ("new", "eager", "compile"):
        if isinstance(r.get(f"time_{key}"), dict):
            t = r[f"time_{key}"]
            lines.append(
                f"{key:9} {t['mean_ms']:.4f} ms mean (std {t['std_ms']:.4f}, min {t['min_ms']:.4f}, "
                f"{t['trials']} trials)"
            )
    if "speedup_eager" in r:
        lines.append(
            f"speedup   {r['speedup_eager']:.2f}x over eager"
            + (f", {r['speedup_compile']:.2f}x over torch.compile" if "speedup_compile" in r else "")
            + f"; fast_1: {'yes' if r.get('fast_1') else 'no'}"
        )
    return "\n".join(lines)
