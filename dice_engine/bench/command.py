"""`dice bench` (and benchmarks/run_bench.py): run the suite on this machine's GPU and write
RESULTS.md and results.json. Exit 0 when every case ran and was correct, 1 without a GPU
runner, 2 when a case was wrong or not run."""
from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

from ..runner import GpuRunner
from .cases import SUITE
from .suite import run_suite
from .write import write_results


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="benchmarks", help="folder for RESULTS.md and results.json")
    parser.add_argument("--cases", default="", help="comma-separated substrings of case names to run")
    parser.add_argument("--torch-compile", action="store_true", help="also time torch.compile")
    parser.add_argument("--compile-budget", type=float, default=300.0,
                        help="seconds allowed for torch.compile in all")
    parser.add_argument("--engine", action="store_true", help="let the engine's search pick each kernel")
    parser.add_argument("--budget", type=int, default=8, help="engine evaluations per case (--engine)")
    parser.add_argument("--max-candidates", type=int, default=6, help="candidates per case (registry mode)")
    parser.add_argument("--explore", type=int, default=0,
                        help="random legal points per sketch on top of the candidates (registry mode)")
    parser.add_argument("--time-budget", type=float, default=float("inf"),
                        help="seconds after which no further case starts (results are written after each)")


def run(args: argparse.Namespace) -> int:
    wanted = [w for w in args.cases.split(",") if w]
    cases = [c for c in SUITE if not wanted or any(w in c.name for w in wanted)]
    started = time.monotonic()
    with GpuRunner() as runner:
        if not runner.available():
            print("no GPU runner: the benchmark needs nvcc, pycuda and an NVIDIA GPU", file=sys.stderr)
            return 1
        rows = run_suite(cases, runner=runner, engine=args.engine, budget=args.budget,
                         max_candidates=args.max_candidates, explore=args.explore,
                         torch_compile=args.torch_compile,
                         compile_budget_s=args.compile_budget, time_budget_s=args.time_budget,
                         on_row=lambda partial: write_results(partial, runner, args.out))
        md, js = write_results(rows, runner, args.out)
        print(f"wrote {md} and {js} in {time.monotonic() - started:.0f} s; runner {runner.stats()}")
    print(md.read_text())
    return 0 if all(r.correct for r in rows) else 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dice bench", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))
