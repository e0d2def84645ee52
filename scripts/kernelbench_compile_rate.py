"""How many KernelBench task files `dice kernelbench` turns into a ModelNew whose CUDA compiles.

    python scripts/kernelbench_compile_rate.py DIR... [--arch sm_90] [--budget 1] [--jobs N] [--json OUT.json]

Runs `dice kernelbench` on every *.py of each DIR in a child process (with a timeout), and counts
per directory: compiled (exit 0: every kernel generated and the library compiled for the arch),
refused with a one-line reason (exit 1, one stderr line, no traceback), and anything else
(a crash, a traceback, a timeout), which is a bug. Needs nvcc; no GPU.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def run_one(task: Path, out_dir: Path, arch: str, budget: int, timeout: float) -> dict:
    out = out_dir / f"{task.stem}_dice.py"
    cmd = [
        sys.executable,
        "-m",
        "dice_engine",
        "kernelbench",
        str(task),
        "-o",
        str(out),
        "--arch",
        arch,
        "--budget",
        str(budget),
        "--format",
        "json",
    ]
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {
            "task": task.name,
            "outcome": "timeout",
            "message": f"over {timeout:.0f} s",
            "seconds": timeout,
        }
    seconds = round(time.monotonic() - start, 1)
    stderr = [line for line in done.stderr.splitlines() if line.strip()]
    if done.returncode == 0:
        outcome, message = "compiled", ""
    elif done.returncode == 1 and len(stderr) == 1 and "Traceback" not in done.stderr:
        outcome, message = "refused", stderr[0]
    else:
        outcome, message = "bug", (stderr[-1] if stderr else f"exit {done.returncode}")
    return {"task": task.name, "outcome": outcome, "message": message, "seconds": seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--budget", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--json", help="write every file's outcome here")
    parser.add_argument("--jobs", type=int, default=1, help="tasks translated at once")
    args = parser.parse_args()
    tasks = [
        (d, t) for d in args.dirs for t in sorted(Path(d).glob("*.py"), key=lambda p: (len(p.name), p.name))
    ]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="dice-kb-") as tmp, ThreadPoolExecutor(args.jobs) as pool:

        def one(item: tuple[str, Path]) -> None:
            d, task = item
            row = {"dir": d, **run_one(task, Path(tmp), args.arch, args.budget, args.timeout)}
            rows.append(row)
            print(f"{d}/{row['task']}: {row['outcome']} {row['seconds']}s {row['message']}", flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(rows, indent=1))

        list(pool.map(one, tasks))
    for d in args.dirs:
        counts = Counter(r["outcome"] for r in rows if r["dir"] == d)
        print(
            f"{d}: {counts['compiled']} compiled, {counts['refused']} refused with one line, "
            f"{counts['bug']} bugs, {counts['timeout']} timeouts, of {sum(counts.values())}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
