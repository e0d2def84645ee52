"""KernelBench results on a GPU machine: translate every task, build, evaluate, write the table.

    python scripts/kernelbench_results.py KB/level1 KB/level2 --work /tmp/kb --jobs 16 --gpus 8 \
        [--stage all|translate|eval] [--budget 4] [--trials 100] [--compile] \
        [--out benchmarks/KERNELBENCH_RESULTS.md]

`--stage translate` does steps 1-2 (only 1 with `--skip-build`; `--stage build` does 2, so that
translating on one machine and compiling on another with more cores is possible) and keeps the
rows in WORK/rows.json; `--stage eval` starts
from them and evaluates the tasks of the directories it is given, keeping earlier results of
the others (so levels can be evaluated by separate commands where one would run over a time
limit); the table always covers every row. Under a time limit, `--time-budget S` starts no new
evaluation after S seconds and `--resume` skips the rows already evaluated; WORK/rows.json is
rewritten after every evaluation, so a run that is stopped keeps what it measured.

1. `dice kernelbench` on every task (CPU, `--jobs` at a time);
2. each ModelNew's CUDA compiled into its cached library (CPU, `--jobs` at a time), so that
   compile time never lands in a GPU's queue; with `--compile`, each task's Model also compiled
   once by torch.compile (`--warm-processes` at a time) to fill Inductor's caches, for the same
   reason;
3. KernelBench's protocol (`dice kernelbench --eval`'s) on every ModelNew, one per GPU at a time
   (`--gpus`, pinned with CUDA_VISIBLE_DEVICES), each with a timeout (`--case-timeout`), in as
   few evaluation processes as is safe (`evaluate_many`);
4. writes the Markdown table (per level: translated, correct, fast_1 = correct and faster than
   eager, geometric-mean speedup over the correct ones; one row per task) and a JSON file beside it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dice_engine.kernelbench.evaluate import evaluate_many


def _run(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"timed out after {timeout:.0f} s")


def translate(task: Path, work: Path, budget: int) -> dict:
    new = work / task.parent.name / f"{task.stem}_dice.py"
    new.parent.mkdir(parents=True, exist_ok=True)
    done = _run(
        [
            sys.executable,
            "-m",
            "dice_engine",
            "kernelbench",
            str(task),
            "-o",
            str(new),
            "--budget",
            str(budget),
            "--format",
            "json",
        ],
        900,
    )
    row = {"level": task.parent.name, "task": task.name, "new": str(new), "translated": done.returncode == 0}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        row["message"] = lines[-1] if lines else f"exit {done.returncode}"
    else:
        row["kernels"] = [k["fused"] for k in json.loads(done.stdout)["kernels"]]
    return row


def build(row: dict) -> None:
    code = (
        "import types,sys; m=types.ModuleType('m'); p=sys.argv[1]; "
        "exec(compile(open(p).read(), p, 'exec'), m.__dict__); m._library()"
    )
    done = _run([sys.executable, "-c", code, row["new"]], 900)
    if done.returncode != 0:
        row["translated"] = False
        row["message"] = "build: " + (done.stderr.strip().splitlines() or ["failed"])[-1]


WARM_MARK = Path(tempfile.gettempdir()) / "dice-inductor-warm.json"  # gone with the machine, as the caches


def warm_inductor(tasks: list[Path], processes: int) -> None:
    """Inductor's caches filled for the tasks (`inductor_warm`), `processes` children at a time, so
    that the timed run's torch.compile only looks its code up; tasks warmed on this machine are
    skipped."""
    done = set(json.loads(WARM_MARK.read_text())) if WARM_MARK.exists() else set()
    todo = [str(t) for t in tasks if str(t) not in done]
    groups = [todo[i::processes] for i in range(processes) if todo[i::processes]]

    def run_group(group: list[str]) -> list[dict]:
        out = _run([sys.executable, "-m", "dice_engine.kernelbench.inductor_warm", *group], 120 * len(group))
        return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]

    with ThreadPoolExecutor(max(1, len(groups))) as pool:
        lines = [line for group in pool.map(run_group, groups) for line in group]
    warmed = [line for line in lines if "seconds" in line]
    for line in lines:
        if "error" in line:
            print(f"inductor warm-up: {line['task']}: {line['error']}", flush=True)
    total = sum(line["seconds"] for line in warmed)
    print(f"inductor warm-up: {len(warmed)} of {len(todo)} tasks, {total:.0f} s of compiling", flush=True)
    WARM_MARK.write_text(json.dumps(sorted(done | {line["task"] for line in warmed})))


def evaluate_on_gpu(
    rows: list[dict], by_name: dict, gpu: int, args: argparse.Namespace, on_row: Callable[[dict], None]
) -> None:
    """The rows' ModelNew files evaluated one after another on one GPU, through as few evaluation
    processes as is safe (`evaluate_many`)."""
    pairs = [(str(by_name[(r["level"], r["task"])]), r["new"]) for r in rows]

    def record(i: int, result: dict) -> None:
        rows[i]["eval"] = result
        on_row(rows[i])

    evaluate_many(
        pairs,
        trials=args.trials,
        with_compile=args.compile,
        timeout=args.case_timeout,
        time_budget=args.time_budget,
        env=dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu)),
        on_result=record,
    )


def _geomean(values: list[float | None]) -> str:
    present = [v for v in values if v]
    if not present:
        return "n/a"
    return f"{math.exp(sum(math.log(v) for v in present) / len(present)):.2f}x ({len(present)})"


def table(rows: list[dict], trials: int) -> str:
    out = ["# KernelBench results (DICE, `scripts/kernelbench_results.py`)", ""]
    device = next((r["eval"].get("device") for r in rows if "eval" in r and r["eval"].get("device")), "?")
    out += [
        f"Device: {device}. fast_1: correct (5 seeded trials, tol 1e-4 fp32) and faster than PyTorch eager "
        f"(mean of {trials} timed trials, L2 flushed before each). Guards as in docs/kernelbench.md.",
        "",
        "| level | tasks | translated | evaluated | correct | fast_1 | fast_1 % | float64 within | "
        "geomean speedup (correct) | geomean vs torch.compile |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for level in sorted({r["level"] for r in rows}):
        rs = [r for r in rows if r["level"] == level]
        evaluated = [r for r in rs if "eval" in r]
        correct = [r for r in evaluated if r["eval"].get("correct")]
        fast = [r for r in correct if r["eval"].get("fast_1")]
        accurate = [r for r in correct if r["eval"].get("float64", {}).get("ok")]
        vs_eager = _geomean([r["eval"].get("speedup_eager") for r in correct])
        vs_compile = _geomean([r["eval"].get("speedup_compile") for r in correct])
        translated = sum(r["translated"] for r in rs)
        cells = [level, len(rs), translated, len(evaluated), len(correct), len(fast)]
        cells += [f"{100 * len(fast) / len(rs):.0f}%", len(accurate), vs_eager, vs_compile]
        out.append("| " + " | ".join(map(str, cells)) + " |")
    out += [
        "",
        "float64: the solution's error against a float64 truth (max |o - t| / (1 + |t|)), PyTorch fp32's "
        "own in brackets; ✗ where it is above max(tolerance, 2x PyTorch's).",
        "",
        "| level | task | outcome | new ms | eager ms | torch.compile ms | speedup | vs torch.compile "
        "| float64 error (PyTorch) | note |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        ev = r.get("eval", {})
        if not r["translated"]:
            outcome = "not translated"
        elif "eval" not in r:
            outcome = "not evaluated"
        elif ev.get("status") == "error":
            outcome = "eval error"
        else:
            outcome = ("fast_1" if ev.get("fast_1") else "correct") if ev.get("correct") else "wrong"
        new_ms = f"{ev['time_new']['mean_ms']:.4f}" if "time_new" in ev else ""
        eager_ms = f"{ev['time_eager']['mean_ms']:.4f}" if "time_eager" in ev else ""
        compile_ms = f"{ev['time_compile']['mean_ms']:.4f}" if "time_compile" in ev else ""
        speed = f"{ev['speedup_eager']:.2f}" if "speedup_eager" in ev else ""
        vs_compile = f"{ev['speedup_compile']:.2f}" if "speedup_compile" in ev else ""
        note = (r.get("message") or ev.get("message") or "").replace("|", "/")[:160]
        f64 = ev.get("float64", {})
        if "err_new" in f64:
            accuracy = f"{f64['err_new']:.2g} ({f64['err_torch']:.2g})" + ("" if f64["ok"] else " ✗")
        else:
            accuracy = "n/a" if "unavailable" in f64 else ""
        cells = [r["level"], r["task"], outcome, new_ms, eager_ms, compile_ms, speed, vs_compile, accuracy]
        cells.append(note)
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--work", default="/tmp/dice-kernelbench")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--budget", type=int, default=4)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--compile", action="store_true", help="also time torch.compile (Inductor)")
    parser.add_argument("--warm-processes", type=int, default=4,
                        help="--compile: Inductor warm-up children at a time in the build stage")
    parser.add_argument("--out", default="benchmarks/KERNELBENCH_RESULTS.md")
    parser.add_argument("--stage", choices=("all", "translate", "build", "eval"), default="all")
    parser.add_argument("--skip-build", action="store_true", help="translate only; --stage build later")
    parser.add_argument("--time-budget", type=float, default=None, help="start no evaluation after S seconds")
    parser.add_argument("--resume", action="store_true", help="skip rows that already have a result")
    parser.add_argument("--case-timeout", type=float, default=1200.0, help="seconds one evaluation may take")
    args = parser.parse_args()
    tasks = [t for d in args.dirs for t in sorted(Path(d).glob("*.py"), key=lambda p: (len(p.name), p.name))]
    work = Path(args.work)
    saved = work / "rows.json"
    if args.stage in ("build", "eval"):
        rows = json.loads(saved.read_text())
    else:
        with ThreadPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(lambda t: translate(t, work, args.budget), tasks))
        print(f"translated {sum(r['translated'] for r in rows)} of {len(rows)}", flush=True)
        saved.write_text(json.dumps(rows, indent=1))
    by_name = {(t.parent.name, t.name): t for t in tasks}
    if args.stage == "build" or (args.stage in ("all", "translate") and not args.skip_build):
        # only the tasks of the directories given, as for the evaluation
        mine = [r for r in rows if r["translated"] and (r["level"], r["task"]) in by_name
                and not (args.resume and "eval" in r)]
        with ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(build, mine))
        saved.write_text(json.dumps(rows, indent=1))
        if args.compile:
            warm_inductor([by_name[(r["level"], r["task"])] for r in mine], args.warm_processes)
    if args.stage in ("translate", "build"):
        return 0
    # only the tasks of the directories given (the others keep the results they have)
    todo = [
        r
        for r in rows
        if r["translated"] and (r["level"], r["task"]) in by_name and not (args.resume and "eval" in r)
    ]
    progress = threading.Lock()

    def on_row(row: dict) -> None:
        with progress:
            saved.write_text(json.dumps(rows, indent=1))
            ev = row["eval"]
            print(
                f"{row['level']}/{row['task']}: correct={ev.get('correct')} "
                f"speedup={ev.get('speedup_eager', float('nan')):.2f} {ev.get('message', '')[:80]}",
                flush=True,
            )

    shares = [todo[g :: args.gpus] for g in range(args.gpus)]
    with ThreadPoolExecutor(args.gpus) as pool:
        list(pool.map(lambda g: evaluate_on_gpu(shares[g], by_name, g, args, on_row), range(args.gpus)))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(rows, indent=1))
    text = table(rows, args.trials)
    Path(args.out).write_text(text)
    Path(args.out).with_suffix(".json").write_text(json.dumps(rows, indent=1))
    print(
        "\n".join(line for line in text.splitlines() if line.startswith("| level") or "%" in line), flush=True
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
