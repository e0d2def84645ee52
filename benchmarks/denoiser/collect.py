"""Collect the learned denoiser's dataset on a GPU: design points of every applicable sketch over
several hundred problems, each compiled, verified and timed by the runner.

    python benchmarks/denoiser/collect.py [--out benchmarks/denoiser/data/measurements.jsonl]
        [--time-budget 220] [--resume] [--jobs N] [--seed 0] [--families a,b] [--splits s,t]
        [--dry-run [--limit N]]

Order: breadth first. Round 0 takes a few points of every (problem, sketch), the sketch's
default point first; later rounds add more (denser on held-out problems, which the evaluation
replays), until the space is exhausted or the time is up. Problems are visited in a seeded
order, so a cut-short run covers a random spread of them. Up to 16 points of one problem (of
its sketches) are rendered under distinct names into one translation unit and built by one nvcc
per target (nvcc's fixed cost is most of a small kernel's build); the builds run on every core
and the GPU measures one kernel at a time as builds finish (the runner: fresh inputs, every
element checked, then timed). Every measurement is appended as one JSON line
(benchmarks/denoiser/dataset.py) and flushed, so an interrupted run loses nothing; `--resume`
skips what the file already holds.
`--time-budget` counts from the start (runner start-up included): no measurement starts after
it, running builds are stopped. `--splits heldout-shape,heldout-range` spends a run on the
held-out problems only (the evaluation replays searches on them: the denser, the truer).
`--dry-run` lists what would be measured, in order, without nvcc or a GPU.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE)]

from dataset import FORMAT_VERSION, DatasetError, point_key, read_records  # noqa: E402
from problems import ProblemSpec, problem_specs  # noqa: E402

from dice_engine.arch import ArchSpec, resolve  # noqa: E402
from dice_engine.intent import IntentError, default_kernel_name, parse_intent  # noqa: E402
from dice_engine.ir.patterns import Problem, classify  # noqa: E402
from dice_engine.ir.work import work  # noqa: E402
from dice_engine.refine.cost import estimate  # noqa: E402
from dice_engine.sketches.base import Point, RenderedKernel, Sketch  # noqa: E402
from dice_engine.sketches.registry import candidates  # noqa: E402

DEFAULT_OUT = HERE / "data" / "measurements.jsonl"
BATCH = 16                      # points per job: nvcc runs once per target among them
# cumulative points per (problem, sketch) after each round
TRAIN_QUOTA = (6, 16, 40, 100, 1 << 30)
HELDOUT_QUOTA = (16, 64, 160, 1 << 30)
# the general lowering's spaces are large and it rarely wins where a family serves the problem:
# a few points of it per problem, so the search's replay can still weigh it
SPARSE_QUOTA = {"generic.lowered": 2}
TRIALS, TIMED_RUNS, KERNEL_TIMEOUT_S = 2, 20, 10.0
MEASURE_MARGIN_S = 2.0          # no measurement starts this close to the deadline


@dataclass
class Job:
    """Points of one problem (of one or several sketches), built together."""
    spec: ProblemSpec
    problem: Problem
    kernel_name: str
    items: list[tuple[Sketch, Point]]
    round: int


def _prepare(spec: ProblemSpec, arch: ArchSpec,
             seed: int) -> tuple[Problem, str, list[tuple[Sketch, list[Point]]]]:
    """The problem, its kernel name and, per applicable sketch, its legal points in the order
    they are measured: the default point first, the rest shuffled by the seed."""
    program = parse_intent(spec.intent)
    problem = classify(program)
    out = []
    for sketch in candidates(problem, arch):
        points = list(sketch.space(problem, arch).points())
        default = sketch.default_point(problem, arch)
        rest = [p for p in points if p != default]
        random.Random(f"{seed}:{spec.shape_id}:{sketch.name}").shuffle(rest)
        out.append((sketch, ([default] if default in points else []) + rest))
    return problem, default_kernel_name(program), out


def plan(specs: list[ProblemSpec], arch: ArchSpec, seed: int,
         done: set[tuple[str, str, str]]) -> Iterator[Job]:
    """Every job, breadth first: round by round, problems in a seeded order; points already in
    `done` ((shape_id, sketch, point key)) are skipped."""
    order = list(specs)
    random.Random(f"{seed}:order").shuffle(order)
    prepared = []
    for spec in order:
        try:
            prepared.append((spec, *_prepare(spec, arch, seed)))
        except IntentError as e:
            print(f"collect.py: skipping {spec.shape_id}: {e.message}", file=sys.stderr)
    rounds = max(len(TRAIN_QUOTA), len(HELDOUT_QUOTA))
    for round_no in range(rounds):
        for spec, problem, name, sketches in prepared:
            quota = HELDOUT_QUOTA if spec.split != "train" else TRAIN_QUOTA
            if round_no >= len(quota):
                continue
            start = quota[round_no - 1] if round_no else 0
            todo = []
            for sketch, points in sketches:
                cap = min(quota[round_no], SPARSE_QUOTA.get(sketch.name, quota[round_no]))
                todo += [(sketch, p) for p in points[start:cap]
                         if (spec.shape_id, sketch.name, point_key(p)) not in done]
            for i in range(0, len(todo), BATCH):
                yield Job(spec, problem, name, todo[i:i + BATCH], round_no)


# -- building ----------------------------------------------------------------------------------

@dataclass
class BuiltPoint:
    index: int                  # of the point in its job (its kernels are named after it)
    sketch: Sketch
    point: Point
    rendered: RenderedKernel | None
    built: Any                  # runner.build.Built, or None when rendering failed
    error: str = ""


def _render(job: Job, arch: ArchSpec, index: int, sketch: Sketch, point: Point) -> RenderedKernel | str:
    try:
        return sketch.render(job.problem, arch, point, f"{job.kernel_name}_p{index}")
    except Exception as e:       # a sketch bug at one point is recorded, not fatal
        return f"{type(e).__name__}: {e}"


def build_job(job: Job, arch: ArchSpec, gpu_arch: str, cancel: threading.Event) -> list[BuiltPoint]:
    """Render the job's points and build those of one target (sm_90 or sm_90a, ...) as one
    library; where that fails, each alone (so one bad point costs only itself)."""
    from dice_engine.runner.build import build_library
    rendered = [_render(job, arch, i, sketch, p) for i, (sketch, p) in enumerate(job.items)]
    by_target: dict[str, list[RenderedKernel]] = {}
    for r in rendered:
        if not isinstance(r, str):
            by_target.setdefault(r.compile_arch(gpu_arch), []).append(r)
    together = {target: build_library("\n".join(r.source for r in group), target,
                                      filename=f"{job.kernel_name}.cu", cancel=cancel.is_set)
                for target, group in by_target.items()}
    out = []
    for index, ((sketch, point), r) in enumerate(zip(job.items, rendered)):
        if isinstance(r, str):
            out.append(BuiltPoint(index, sketch, point, None, None, r))
            continue
        built = together[r.compile_arch(gpu_arch)]
        if built.library is None:
            if cancel.is_set():
                break
            built = build_library(r.source, r.compile_arch(gpu_arch), filename=f"{job.kernel_name}.cu",
                                  cancel=cancel.is_set)
        out.append(BuiltPoint(index, sketch, point, r, built, built.error))
    return out


# -- measuring and recording -------------------------------------------------------------------

def _resources(compiled: Any, name: str) -> dict[str, Any]:
    """ptxas's figures of the point's kernels, keyed by the kernel name without `name`."""
    if compiled is None:
        return {}
    return {k[len(name):] if k.startswith(name) else k: v.to_json()
            for k, v in compiled.resources.items() if k.startswith(name + "_") or k == name}


def record(job: Job, built: BuiltPoint, arch: ArchSpec, target: str, gpu: str, seed: int,
           runner: Any | None) -> dict[str, Any]:
    """Measure one built point (with `runner`) and return its dataset line."""
    from dice_engine.runner.build import launcher_symbol
    spec = job.spec
    name = f"{job.kernel_name}_p{built.index}"
    out: dict[str, Any] = {
        "v": FORMAT_VERSION, "seed": seed, "shape_id": spec.shape_id, "family": spec.family,
        "split": spec.split, "intent": spec.intent, "target": target, "gpu": gpu,
        "kernel_name": job.kernel_name, "sketch": built.sketch.name, "tokens": built.point,
        "round": job.round, "status": "ok", "time_us": None, "cost_us": None, "reference_time_us": None,
        "max_rel_err": None, "resources": {}, "detail": ""}
    if built.rendered is None:
        out.update(status="render-error", detail=built.error[:300])
        return out
    compiled = built.built.result
    if built.built.library is None:
        out.update(status="compile-error", detail=(built.built.error or built.error)[:300],
                   resources=_resources(compiled, name))
        return out
    out["resources"] = _resources(compiled, name)
    cost = estimate(job.problem, arch, built.rendered, compiled, work(job.problem))
    if math.isinf(cost.time_us):
        out.update(status="cannot-launch", detail="; ".join(cost.notes)[:300])
        return out
    out["cost_us"] = cost.time_us
    if runner is None:
        return out
    report = runner.run_library(str(built.built.library), launcher_symbol(built.rendered), built.rendered,
                                job.problem, trials=TRIALS)
    out.update(status=report.verdict, time_us=report.time_us if report.verified else None,
               reference_time_us=report.reference_time_us, max_rel_err=report.max_rel_err,
               detail="" if report.verified else report.detail[:300])
    return out


def _done(path: Path, seed: int) -> set[tuple[str, str, str]]:
    records = read_records(path)
    if any(r["seed"] != seed for r in records):
        raise DatasetError(f"{path} was collected with another --seed; resume with the same seed")
    return {(r["shape_id"], r["sketch"], point_key(r["tokens"])) for r in records}


def _gpu_runner() -> Any:
    from dice_engine.runner import GpuRunner
    return GpuRunner(trials=TRIALS, timed_runs=TIMED_RUNS, kernel_timeout_s=KERNEL_TIMEOUT_S)


def run(args: argparse.Namespace, specs: list[ProblemSpec], out: TextIO, done: set[tuple[str, str, str]],
        started: float, make_runner: Callable[[], Any] = _gpu_runner) -> dict[str, int]:
    counts = {"measured": 0, "ok": 0, "failed": 0, "shapes": 0}
    deadline = started + args.time_budget
    cancel = threading.Event()
    with make_runner() as runner:
        if not runner.available():
            raise DatasetError("no GPU runner (needs pycuda, nvcc and an NVIDIA GPU)")
        gpu = runner.gpu.get("gpu", "?")
        gpu_arch = runner.build_arch() or "sm_90"
        target = args.target or _gpu_target(gpu, gpu_arch)
        arch = resolve(target)
        runner.ceilings()
        jobs = plan(specs, arch, args.seed, done)
        shapes: set[str] = set()
        pool = ThreadPoolExecutor(max_workers=args.jobs)
        pending: dict[Future[list[BuiltPoint]], Job] = {}
        try:
            exhausted = False
            while time.monotonic() < deadline - MEASURE_MARGIN_S:
                while not exhausted and len(pending) < 2 * args.jobs:
                    job = next(jobs, None)
                    if job is None:
                        exhausted = True
                        break
                    pending[pool.submit(build_job, job, arch, gpu_arch, cancel)] = job
                if not pending:
                    break
                finished, _ = wait(pending, timeout=max(0.1, deadline - time.monotonic()),
                                   return_when=FIRST_COMPLETED)
                for future in finished:
                    job = pending.pop(future)
                    try:
                        points = future.result()
                    except Exception as e:       # a failed build job costs its points, not the run
                        print(f"collect.py: {job.spec.shape_id}: {type(e).__name__}: {e}", file=sys.stderr)
                        continue
                    for built in points:
                        if time.monotonic() >= deadline - MEASURE_MARGIN_S:
                            break
                        line = record(job, built, arch, target, gpu, args.seed, runner)
                        out.write(json.dumps(line) + "\n")
                        out.flush()
                        counts["measured"] += 1
                        counts["ok" if line["status"] == "ok" else "failed"] += 1
                        shapes.add(line["shape_id"])
        finally:
            cancel.set()
            pool.shutdown(wait=True, cancel_futures=True)
        counts["shapes"] = len(shapes)
    return counts


def _gpu_target(gpu: str, gpu_arch: str) -> str:
    try:
        resolve(gpu)
        return gpu
    except KeyError:
        return gpu_arch


def dry_run(args: argparse.Namespace, specs: list[ProblemSpec], done: set[tuple[str, str, str]]) -> int:
    arch = resolve(args.target or "H200")
    jobs = 0
    for job in plan(specs, arch, args.seed, done):
        for sketch, point in job.items:
            print(json.dumps({"round": job.round, "shape_id": job.spec.shape_id, "split": job.spec.split,
                              "sketch": sketch.name, "tokens": point}))
        jobs += 1
        if args.limit and jobs >= args.limit:
            break
    return 0


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    parser = argparse.ArgumentParser(prog="collect.py", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--time-budget", type=float, default=220.0, help="seconds from start (default 220)")
    parser.add_argument("--resume", action="store_true", help="append to --out, skipping what it holds")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel nvcc builds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--families", help="comma-separated subset of the problem families")
    parser.add_argument("--splits", help="comma-separated subset of train, heldout-shape, heldout-range")
    parser.add_argument("--target", help="the arch table entry the cost model uses (default: the GPU's)")
    parser.add_argument("--dry-run", action="store_true", help="list what would be measured, in order")
    parser.add_argument("--limit", type=int, default=0, help="--dry-run: list only the first N builds")
    args = parser.parse_args(argv)
    families = args.families.split(",") if args.families else None
    specs = problem_specs(args.seed, families)
    if args.splits:
        specs = [s for s in specs if s.split in args.splits.split(",")]
    if not specs:
        print(f"collect.py: no problems in families {args.families!r}, splits {args.splits!r}",
              file=sys.stderr)
        return 2
    if args.jobs < 1 or args.time_budget <= 0:
        print("collect.py: --jobs and --time-budget must be positive", file=sys.stderr)
        return 2
    try:
        done = _done(args.out, args.seed) if args.resume and args.out.exists() else set()
        if args.dry_run:
            return dry_run(args, specs, done)
        if args.out.exists() and args.out.stat().st_size and not args.resume:
            raise DatasetError(f"{args.out} already holds measurements: --resume to add to it, or pick --out")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as out:
            counts = run(args, specs, out, done, started)
    except (DatasetError, KeyError) as e:
        print(f"collect.py: {e.args[0] if e.args else e}", file=sys.stderr)
        return 1
    print(f"collect.py: {counts['measured']} measured ({counts['ok']} verified, {counts['failed']} not) over "
          f"{counts['shapes']} problems in {time.monotonic() - started:.0f} s -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
