"""`dice kernelbench`: a task file in, a ModelNew file out; `--eval` runs KernelBench's protocol.

Exit codes: 0 every operation of forward is served (or, with --eval, the run finished and the
new model is correct); 1 an operation cannot be served, or --eval found it wrong (one line says
why); 2 usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..api import GenerationError, one_line
from ..arch import resolve
from ..compile import NvccNotFound
from .lower import Unmapped
from .task import TaskError
from .translate import BuildError, translate

SERVE_ERRORS = (TaskError, Unmapped, GenerationError, BuildError, NvccNotFound)


class KernelbenchUsage(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", help="TASK.py (with --eval: TASK.py NEW.py)")
    parser.add_argument(
        "-o", "--out", help="where to write ModelNew (default: <stem>_dice.py beside the task)"
    )
    parser.add_argument("--arch", default="sm_90", help="GPU or architecture to generate for (default sm_90)")
    parser.add_argument(
        "--budget", type=int, default=24, help="candidate evaluations per kernel (default 24)"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--eval", action="store_true", help="run KernelBench's protocol on this GPU for TASK.py and NEW.py"
    )
    parser.add_argument("--trials", type=int, default=100, help="--eval: timing trials (default 100)")
    parser.add_argument(
        "--correctness-trials", type=int, default=5, help="--eval: correctness trials (default 5)"
    )
    parser.add_argument("--compile", action="store_true", help="--eval: also time torch.compile")
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="--eval: seconds before the run is stopped"
    )


def run(args: argparse.Namespace) -> int:
    try:
        if args.eval:
            return _evaluate(args)
        return _translate(args)
    except KernelbenchUsage as e:
        print(f"dice kernelbench: error: {e}", file=sys.stderr)
        return 2


def _translate(args: argparse.Namespace) -> int:
    if len(args.files) != 1:
        raise KernelbenchUsage("give one task file (or --eval TASK.py NEW.py)")
    if args.budget < 1:
        raise KernelbenchUsage("--budget must be at least 1")
    try:
        resolve(args.arch)
    except KeyError as e:
        raise KernelbenchUsage(e.args[0]) from None
    task = Path(args.files[0])
    if not task.is_file():
        raise KernelbenchUsage(f"no such task file: {task}")
    out = Path(args.out) if args.out else task.with_name(f"{task.stem}_dice.py")
    try:
        translation = translate(task, arch=args.arch, budget=args.budget)
    except SERVE_ERRORS as e:
        return _fail(args, task, one_line(e), e)
    out.write_text(translation.text, encoding="utf-8")
    if args.format == "json":
        print(
            json.dumps(
                {
                    "task": str(task),
                    "output": str(out),
                    "arch": translation.arch,
                    "status": "ok",
                    "message": "",
                    "kernels": [
                        {"name": k.name, "fused": k.fused, "result": k.result.to_json()}
                        for k in translation.kernels
                    ],
                }
            )
        )
    else:
        print("\n".join(translation.report()))
        print(f"wrote {out}")
    return 0


def _fail(args: argparse.Namespace, task: Path, message: str, error: Exception) -> int:
    if args.format == "json":
        detail: dict[str, Any] = {}
        if isinstance(error, Unmapped):
            detail = {"op": error.op, "line": error.line, "why": error.why}
        print(
            json.dumps({"task": str(task), "output": None, "status": "error", "message": message, **detail})
        )
    print(f"dice kernelbench: {task}: {message}", file=sys.stderr)
    return 1


def _evaluate(args: argparse.Namespace) -> int:
    from .evaluate import EvalError, evaluate, format_result

    if len(args.files) != 2:
        raise KernelbenchUsage("--eval takes TASK.py NEW.py")
    if args.trials < 1 or args.correctness_trials < 1:
        raise KernelbenchUsage("--trials and --correctness-trials must be at least 1")
    try:
        result = evaluate(
            args.files[0],
            args.files[1],
            trials=args.trials,
            correctness_trials=args.correctness_trials,
            with_compile=args.compile,
            timeout=args.timeout,
        )
    except EvalError as e:
        if args.format == "json":
            print(
                json.dumps(
                    {"task": args.files[0], "new": args.files[1], "status": "error", "message": str(e)}
                )
            )
        print(f"dice kernelbench --eval: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result) if args.format == "json" else format_result(result))
    return 0 if result["correct"] else 1
