"""`dice kernelbench --eval`: KernelBench's protocol for a task and a ModelNew, in a child
process with a timeout (the solution's code never runs in this process); `evaluate_many` runs
a list of them through as few child processes as is safe."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
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
    result = evaluate_many(
        [(task, new)],
        trials=trials,
        correctness_trials=correctness_trials,
        with_compile=with_compile,
        timeout=timeout,
    )[0]
    if result.get("status") == "error":
        raise EvalError(result["message"])
    return result


def evaluate_many(
    pairs: Sequence[tuple[str, str]],
    *,
    trials: int = 100,
    correctness_trials: int = 5,
    with_compile: bool = False,
    timeout: float = 900.0,
    time_budget: float | None = None,
    env: dict[str, str] | None = None,
    on_result: Callable[[int, dict[str, Any]], None] | None = None,
) -> list[dict[str, Any] | None]:
    """Evaluates (task, new) pairs in order in as few child processes as is safe (eval_child
    says when one must be replaced); each pair has `timeout` seconds. With `time_budget`, no
    pair starts after that many seconds and those not started stay None. `on_result(i, r)` is
    called as each result arrives. A pair that could not be evaluated gets
    `{"status": "error", "message": ...}`."""
    config = {"trials": trials, "correctness_trials": correctness_trials, "compile": with_compile}
    if time_budget is not None:
        config["deadline"] = time.time() + time_budget
    results: list[dict[str, Any] | None] = [None] * len(pairs)

    def record(i: int, result: dict[str, Any]) -> None:
        results[i] = result
        if on_result is not None:
            on_result(i, result)

    start = 0
    while start < len(pairs) and not (time_budget is not None and time.time() > config["deadline"]):
        done, stop = _one_child(pairs[start:], config, timeout, env)
        for i, result in enumerate(done):
            record(start + i, result)
        start += len(done)
        if stop is not None:  # a setup error (no GPU): every pair left gets it
            for i in range(start, len(pairs)):
                record(i, _error(pairs[i], stop))
            break
    return results


def _error(pair: tuple[str, str], message: str) -> dict[str, Any]:
    return {"task": pair[0], "new": pair[1], "correct": False, "status": "error", "message": message}


def _one_child(
    pairs: Sequence[tuple[str, str]], config: dict[str, Any], timeout: float, env: dict[str, str] | None
) -> tuple[list[dict[str, Any]], str | None]:
    """Runs one child over `pairs` until it finishes, stops, dies or overruns a pair; returns the
    results in order (the pair a dead or stopped child was on gets an error) and a message when
    no child can evaluate anything here."""
    jobs = [[str(Path(t).resolve()), str(Path(n).resolve())] for t, n in pairs]
    with tempfile.TemporaryDirectory(prefix="dice-kbeval-") as tmp:
        jobs_file, out = Path(tmp) / "jobs.json", Path(tmp) / "results.jsonl"
        jobs_file.write_text(json.dumps(jobs))
        out.touch()
        child = "dice_engine.kernelbench.eval_child"
        cmd = [sys.executable, "-m", child, str(jobs_file), json.dumps(config), str(out)]
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True, env=env
        )
        stderr_tail: list[str] = []
        drain = threading.Thread(target=_keep_tail, args=(proc, stderr_tail), daemon=True)
        drain.start()
        done: list[dict[str, Any]] = []
        pair_started = time.monotonic()
        while True:
            exited = proc.poll() is not None
            lines = out.read_text(encoding="utf-8").split("\n")[:-1]  # whole lines only
            for line in lines[len(done) :]:
                result = json.loads(line)
                if "error" in result:
                    return done, result["error"]
                result.pop("index", None)
                done.append(result)
                pair_started = time.monotonic()
            if len(done) == len(pairs):
                proc.wait()
                return done, None
            if exited:
                drain.join(timeout=5)
                past_deadline = time.time() > config.get("deadline", float("inf"))
                if proc.returncode == 0 and (done or past_deadline):  # stopped on purpose
                    return done, None
                last = stderr_tail[-1] if stderr_tail else "no message"
                done.append(
                    _error(pairs[len(done)], f"the evaluation process died (exit {proc.returncode}): {last}")
                )
                return done, None
            if time.monotonic() - pair_started > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                overran = f"the evaluation ran over {timeout:.0f} s and was stopped"
                done.append(_error(pairs[len(done)], overran))
                return done, None
            time.sleep(0.05)


def _keep_tail(proc: subprocess.Popen, tail: list[str]) -> None:
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.strip():
            tail.append(line.rstrip())
            del tail[:-20]


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
