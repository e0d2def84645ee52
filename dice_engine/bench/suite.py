"""`run_suite`: generate each benchmark case through DICE, verify it, and time it against
PyTorch eager (and torch.compile) on the same GPU in the same run, with the same method."""
from __future__ import annotations

import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from ..arch import ArchSpec, resolve
from ..intent import parse_intent
from ..ir.patterns import Problem, classify
from ..runner import GpuRunner
from ..runner.build import Built, build_library, launcher_symbol
from ..runner.inputs import intent_bindings
from ..runner.metrics import bytes_moved, flops, operand_dtype
from ..runner.report import RunReport
from ..sketches.base import Point, RenderedKernel, Sketch
from .cases import SUITE, BenchCase
from .plan import registry_candidates, sketch_named


@dataclass
class BenchRow:
    case: str
    family: str
    intent: str
    shape: str
    dtype: str
    bound: str                       # "memory" | "compute": which floor is higher on this machine
    sketch: str | None = None
    tokens: dict[str, Any] = field(default_factory=dict)
    tried: int = 0                   # candidates compiled and screened
    correct: bool = False
    verdict: str = ""
    detail: str = ""
    dice_us: float | None = None
    torch_us: float | None = None
    compiled_us: float | None = None
    compile_note: str = ""
    gbps: float | None = None
    tflops: float | None = None
    roofline_fraction: float | None = None

    @property
    def speedup(self) -> float | None:
        return self.torch_us / self.dice_us if self.dice_us and self.torch_us else None

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"speedup": self.speedup}


@dataclass
class Candidate:
    case: BenchCase
    problem: Problem
    sketch: Sketch
    point: Point
    rendered: RenderedKernel | None = None
    built: Built | None = None
    error: str = ""


def _shape_text(problem: Problem) -> str:
    return "; ".join(f"{d.name}[{', '.join(map(str, d.shape))}]" for d in problem.program.inputs.values())


def _bound(problem: Problem, runner: GpuRunner) -> str:
    ceilings = runner.ceilings()
    bindings = intent_bindings(problem.program)
    work = flops(problem, bindings)
    if work is None or ceilings is None:
        return "memory"
    rate = ceilings.gemm_tflops.get(operand_dtype(problem) or "")
    if not rate:
        return "memory"
    memory_s = bytes_moved(problem, bindings) / (ceilings.copy_gbps * 1e9)
    return "compute" if work / (rate * 1e12) > memory_s else "memory"


def _plan(case: BenchCase, problem: Problem, arch: ArchSpec, target: str, *, engine: bool, budget: int,
          runner: GpuRunner, per_sketch: int, limit: int, explore: int) -> list[Candidate]:
    if engine:
        from ..api import CUDAGenerator   # the engine's own search, measured by this runner

        generator = CUDAGenerator(target, budget=budget, runner=runner)
        result = generator.generate_program(problem.program)
        return [Candidate(case, problem, sketch_named(result.sketch), result.tokens)]
    chosen = registry_candidates(problem, arch, per_sketch=per_sketch, limit=limit, explore=explore)
    return [Candidate(case, problem, sketch, point) for sketch, point in chosen]


def _build(candidate: Candidate, index: int, arch: str) -> Candidate:
    try:
        candidate.rendered = candidate.sketch.render(candidate.problem, resolve(arch), candidate.point,
                                                     f"bench_{candidate.case.name}_{index}")
    except Exception as exc:   # a sketch that cannot render a point is a candidate lost, not a bench lost
        candidate.error = f"render failed: {type(exc).__name__}: {exc}"
        return candidate
    candidate.built = build_library(candidate.rendered.source, candidate.rendered.compile_arch(arch))
    if candidate.built.library is None:
        candidate.error = f"compile failed: {candidate.built.error}"
    return candidate


def _run(runner: GpuRunner, c: Candidate, trials: int) -> RunReport:
    assert c.rendered is not None and c.built is not None and c.built.library is not None
    return runner.run_library(str(c.built.library), launcher_symbol(c.rendered), c.rendered, c.problem,
                              trials=trials, time=True)


def run_suite(cases: Sequence[BenchCase] = SUITE, *, runner: GpuRunner | None = None, engine: bool = False,
              budget: int = 8, per_sketch: int = 2, max_candidates: int = 6, explore: int = 0,
              torch_compile: bool = False,
              compile_budget_s: float = 300.0, time_budget_s: float = math.inf,
              log: Callable[[str], None] = print,
              on_row: Callable[[list[BenchRow]], None] | None = None) -> list[BenchRow]:
    """One row per case. Each case's candidates are compiled in parallel up front, screened with
    one trial and timed; the fastest is verified with the runner's full trials (intent shapes and
    an odd shape when there are symbols) and timed again beside PyTorch. `on_row` sees the rows
    after each case (to write partial results); once `time_budget_s` has passed, the remaining
    cases are listed as not run."""
    from ..runner.torch_timing import TorchTimer   # torch is needed on the GPU machine only
    from .baseline import time_compiled

    runner = runner or GpuRunner()
    if not runner.available():
        raise RuntimeError("the benchmark needs a GPU runner (nvcc, pycuda and an NVIDIA GPU)")
    gpu = runner.gpu
    target = gpu["gpu"]      # a named GPU carries its own figures; an unknown one falls back to its arch
    try:
        spec = resolve(target)
    except KeyError:
        target = gpu["arch"]
        spec = resolve(target)
    problems = {c.name: classify(parse_intent(c.intent)) for c in cases}
    plans = {c.name: _plan(c, problems[c.name], spec, target, engine=engine, budget=budget, runner=runner,
                           per_sketch=per_sketch, limit=max_candidates, explore=explore) for c in cases}
    everything = [(i, cand) for plan in plans.values() for i, cand in enumerate(plan)]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        list(pool.map(lambda item: _build(item[1], item[0], gpu["arch"]), everything))
    log(f"compiled {len(everything)} candidates in {time.monotonic() - started:.0f} s")
    timer = TorchTimer(gpu.get("l2_bytes", 64 << 20), runs=runner.timed_runs)
    compile_left = compile_budget_s
    rows = []
    for case in cases:
        problem = problems[case.name]
        row = BenchRow(case.name, case.family, case.intent, _shape_text(problem),
                       str(next(iter(problem.program.inputs.values())).dtype), _bound(problem, runner))
        rows.append(row)
        if time.monotonic() - started > time_budget_s:
            row.verdict = "not run (time budget)"
            continue
        _measure_case(row, plans[case.name], problem, runner, timer, log)
        if torch_compile and row.torch_us is not None and compile_left > 0:
            t0 = time.monotonic()
            inputs = _inputs(problem, runner)
            row.compiled_us, row.compile_note = time_compiled(problem.program, inputs, timer)
            compile_left -= time.monotonic() - t0
        elif torch_compile and row.torch_us is not None:
            row.compile_note = "skipped: torch.compile time budget spent"
        if on_row is not None:
            on_row(rows)
    return rows


def _inputs(problem: Problem, runner: GpuRunner):
    from ..runner.torch_timing import torch_inputs

    return torch_inputs(problem.program, intent_bindings(problem.program), seed=runner.seed)


def _measure_case(row: BenchRow, plan: list[Candidate], problem: Problem, runner: GpuRunner, timer,
                  log: Callable[[str], None]) -> None:
    """Screen the case's candidates, verify and time the fastest, and time PyTorch eager."""
    from ..runner.torch_timing import time_eager

    screened = []
    for cand in plan:
        if cand.error:
            row.detail = row.detail or cand.error
            continue
        row.tried += 1
        report = _run(runner, cand, trials=1)
        if report.verified and report.time_us:
            screened.append((report.time_us, cand))
            log(f"  screened {row.case} {cand.sketch.name} {cand.point}: {report.time_us:.1f} us")
        else:
            row.detail = row.detail or f"{cand.sketch.name} {report.verdict}: {report.detail}"
    if not screened:
        row.verdict = "no verified candidate"
        log(f"{row.case:22} no verified candidate ({row.detail[:150]})")
        return
    best = min(screened, key=lambda t: t[0])[1]
    final = _run(runner, best, trials=runner.trials)
    row.sketch, row.tokens = best.sketch.name, dict(best.point)
    row.correct, row.verdict, row.detail = bool(final.verified), final.verdict, final.detail
    row.dice_us, row.gbps, row.tflops = final.time_us, final.gbps, final.tflops
    row.roofline_fraction = final.roofline_fraction
    row.torch_us = time_eager(problem.program, _inputs(problem, runner), timer)
    log(f"{row.case:22} {row.verdict:10} DICE {row.dice_us or math.nan:9.1f} us  "
        f"torch {row.torch_us:9.1f} us  x{row.speedup or math.nan:5.2f}  {best.sketch.name}")
