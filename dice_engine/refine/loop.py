"""The DICE loop: iterative denoising over design tokens.

Round 0 starts every candidate sketch (the structural variants) from a fully masked point,
which the denoiser fills from its prior. Each later round takes the incumbents, masks again the
tokens that the feedback on them blames (plus a few at random, fewer as rounds go on, like a
diffusion noise schedule), lets the denoiser fill them, drops illegal and already-seen points,
then renders, compiles and scores each proposal: measured time from the runner when one is
given (a candidate that fails verification is never yielded; the tokens that differ from the
incumbent are blamed), else the analytic cost model, by which a design must beat the prior's
design for its sketch by a margin (PRIOR_MARGIN). Every new best is yielded when found.
The search stops when the budget of evaluations is spent, after `patience` rounds without
improvement, when no new legal point can be proposed, or when `cancel` is set.
"""
from __future__ import annotations

import math
import os
import random
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol

from ..arch import ArchSpec
from ..compile import CompileMessage, CompileResult, compile_cuda
from ..ir.patterns import Problem
from ..ir.work import work
from ..runner.report import RunReport
from ..sketches.base import DesignSpace, Point, RenderedKernel, Sketch
from .blame import Blame, blame_estimate, blame_everything
from .cost import CostEstimate, estimate, main_launch
from .denoiser import MASK, DenoiseRequest, Denoiser, HeuristicPrior

MAX_FILL_ATTEMPTS = 24
# goal=registers: each register per thread costs 1/64 of the time, so going from 64 to 32
# registers is worth being up to a third slower. Other goals rank by time alone.
REGISTER_GOAL_WEIGHT = 1 / 64
# Without a GPU, a design displaces the prior's design for its sketch (the first of that sketch
# to build) only where the cost model expects it at least this much faster. Replayed over the
# denoiser dataset's training problems (H100 measurements), two candidates' estimated speed ratio
# is off from the measured one by a median factor of 1.5 (62% of pairs by more than 1.3); with
# this margin the no-GPU pick came within 5% of the best on 55% of them instead of 50%.
PRIOR_MARGIN = 0.3


def _same_target(rendered: RenderedKernel, gpu_arch: str, arch: ArchSpec) -> bool:
    return rendered.compile_arch(gpu_arch) == rendered.compile_arch(arch.name)


class Runner(Protocol):
    def evaluate(self, rendered: RenderedKernel, problem: Problem, arch: ArchSpec) -> RunReport: ...


Compiler = Callable[[RenderedKernel, ArchSpec], CompileResult]


def compile_rendered(rendered: RenderedKernel, arch: ArchSpec) -> CompileResult:
    kernel = rendered.kernel_names[0].split("::")[-1] if rendered.kernel_names else "kernel"
    return compile_cuda(rendered.source, rendered.compile_arch(arch.name), filename=f"{kernel}.cu")


@dataclass
class Evaluation:
    """One candidate that was rendered and compiled (and measured, with a runner)."""
    index: int
    round: int
    sketch: str
    tokens: Point
    status: str                     # "ok" | "compile-error" | "render-error" | "cannot-launch" | "incorrect"
    score_us: float | None = None   # what ranks it: measured time when verified, else the estimate
                                    # (weighted by registers under goal=registers)
    cost_us: float | None = None
    time_us: float | None = None
    verified: bool | None = None
    detail: str = ""                # the failure, or what held the kernel back
    resources: dict[str, Any] = field(default_factory=dict)


@dataclass
class Candidate:
    """A new best, as yielded by the search."""
    rendered: RenderedKernel
    compiled: CompileResult
    estimate: CostEstimate
    run: RunReport | None
    evaluation: Evaluation
    history: list[Evaluation]       # everything evaluated up to and including this candidate


@dataclass
class _Arm:
    """The search state of one sketch."""
    sketch: Sketch
    space: DesignSpace
    seen: set[tuple[tuple[str, Any], ...]] = field(default_factory=set)
    best: Evaluation | None = None
    best_blame: Blame | None = None
    last_failure: Evaluation | None = None

    @property
    def score(self) -> float:
        return self.best.score_us if self.best and self.best.score_us is not None else math.inf


def _key(point: Point) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(point.items()))


def _resources(est: CostEstimate, compiled: CompileResult, rendered: RenderedKernel) -> dict[str, Any]:
    main = main_launch(rendered)     # the launch the estimate's occupancy is of
    res = compiled.kernel(main.kernel)
    occ = est.occupancy
    return {"registers": res.registers if res else None, "spill_bytes": est.spill_bytes,
            "smem_bytes": max(main.smem_bytes, res.smem_bytes if res else 0),
            "occupancy": occ.fraction if occ else None, "limiter": occ.limiter if occ else None,
            "threads": main.threads, "blocks": main.blocks}


class Search:
    """One search for one problem. Iterate `run()`; `history` and `rounds` hold the whole story."""

    def __init__(self, problem: Problem, arch: ArchSpec, sketches: list[Sketch], name: str, *,
                 budget: int = 24, seed: int = 0, runner: Runner | None = None,
                 denoiser: Denoiser | None = None, cancel: threading.Event | None = None,
                 patience: int = 3, per_round: int = 4, goal: str = "throughput",
                 compiler: Compiler = compile_rendered):
        self.problem, self.arch, self.name = problem, arch, name
        self.arms = [_Arm(s, s.space(problem, arch)) for s in sketches]
        self.budget, self.patience, self.per_round = budget, patience, per_round
        self.runner, self.cancel, self.compiler, self.goal = runner, cancel, compiler, goal
        self.denoiser = denoiser or HeuristicPrior()
        self.rng = random.Random(seed)
        self.work = work(problem)
        self.history: list[Evaluation] = []
        self.rounds = 0
        self.best: Evaluation | None = None

    # -- the loop ------------------------------------------------------------------------------

    def run(self) -> Iterator[Candidate]:
        # Compiles of one round run in parallel (nvcc is a subprocess); scoring stays in order,
        # so results do not depend on which compile finishes first.
        # A runner that can build its library ahead (GpuRunner.prepare) does so beside the compile;
        # where it builds for the search's own arch, its nvcc run (ptxas resources included) is
        # the candidate's compile too, unless a compiler of the caller's was given.
        prepare = getattr(self.runner, "prepare", None)
        build_arch = getattr(self.runner, "build_arch", None)
        gpu_arch = build_arch() if prepare is not None and build_arch is not None else None
        shared = gpu_arch is not None and self.compiler is compile_rendered
        workers = self.per_round * (2 if prepare is not None and not shared else 1)
        pool = ThreadPoolExecutor(max_workers=max(1, min(workers, os.cpu_count() or 1)))
        try:
            stale = 0
            while len(self.history) < self.budget and stale < self.patience and not self._cancelled():
                proposals = self._propose(self.rounds)[:self.budget - len(self.history)]
                if not proposals:
                    break
                improved = False
                rendered = [self._render(arm, point) for arm, point in proposals]
                compiles = [None if isinstance(r, str) or (shared and _same_target(r, gpu_arch, self.arch))
                            else pool.submit(self.compiler, r, self.arch) for r in rendered]
                builds = [None if isinstance(r, str) or prepare is None
                          else pool.submit(prepare, r, self.arch) for r in rendered]
                for (arm, point), r, compiling, building in zip(proposals, rendered, compiles, builds):
                    if self._cancelled():
                        return
                    found = self._evaluate(arm, point, self.rounds, r, compiling, building)
                    if found is not None:
                        improved = True
                        yield found
                self.rounds += 1
                stale = 0 if improved else stale + 1
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    # -- proposing -----------------------------------------------------------------------------

    def _expected_rounds(self) -> int:
        return max(2, 1 + math.ceil((self.budget - len(self.arms)) / self.per_round))

    def _noise_tokens(self, arm: _Arm, round_no: int) -> dict[str, int]:
        """A few random tokens to re-mask; the count shrinks as rounds pass (the noise schedule)."""
        names = [t.name for t in arm.space.tokens if len(t.choices) > 1]
        if not names:
            return {}
        fraction = 0.5 * (1 - round_no / self._expected_rounds())
        count = max(1, round(fraction * len(names)))
        return {n: 0 for n in self.rng.sample(names, min(count, len(names)))}

    def _schedule(self, round_no: int) -> list[_Arm]:
        if round_no == 0:
            return list(self.arms)
        ranked = sorted(self.arms, key=lambda a: a.score)   # stable: registry order breaks ties
        others = ranked[1:self.per_round // 2 + 1]
        return [ranked[0]] * (self.per_round - len(others)) + others

    def _propose(self, round_no: int) -> list[tuple[_Arm, Point]]:
        out: list[tuple[_Arm, Point]] = []
        used: dict[int, int] = {}
        for arm in self._schedule(round_no):
            nth = used.get(id(arm), 0)
            used[id(arm)] = nth + 1
            point = self._fill(arm, round_no, nth)
            if point is not None:
                arm.seen.add(_key(point))
                out.append((arm, point))
        return out

    def _masking(self, arm: _Arm, round_no: int, nth: int) -> tuple[Point | None, dict[str, int]]:
        """The incumbent to mask from (None: everything masked) and the tokens to mask."""
        if arm.best is None:
            return None, {t.name: 0 for t in arm.space.tokens}
        hints: dict[str, int] = {}
        failure = arm.last_failure
        if nth == 0 and failure is not None and failure.index > arm.best.index:
            if failure.status == "incorrect":     # blame what differs from the verified incumbent
                hints = {k: 0 for k, v in failure.tokens.items() if arm.best.tokens.get(k) != v}
            else:                                 # compile/render/launch failure: the whole point
                hints = dict(blame_everything(arm.space, failure.status).tokens)
        elif nth == 0 and arm.best_blame is not None:
            hints = dict(arm.best_blame.tokens)
        if nth > 0 or not hints:
            hints = {**self._noise_tokens(arm, round_no), **hints}
        return arm.best.tokens, hints

    def _fill(self, arm: _Arm, round_no: int, nth: int) -> Point | None:
        anchor, hints = self._masking(arm, round_no, nth)
        for attempt in range(MAX_FILL_ATTEMPTS):
            if attempt and anchor is not None and attempt % 6 == 0:
                hints = {**self._noise_tokens(arm, 0), **hints}    # widen a stuck neighbourhood
            masked = {t.name: (MASK if t.name in hints or anchor is None else anchor[t.name])
                      for t in arm.space.tokens}
            temperature = 0.0 if anchor is None and attempt == 0 else 0.5 + 0.25 * attempt
            request = DenoiseRequest(arm.sketch, arm.space, self.problem, self.arch, masked, anchor,
                                     self.rng, hints, temperature)
            point = self.denoiser.fill(request)
            if _key(point) not in arm.seen and arm.space.is_legal(point):
                return point
        return None

    # -- scoring -------------------------------------------------------------------------------

    def _compiled_by(self, building: Future[Any], rendered: RenderedKernel) -> CompileResult:
        """The compile result of the runner's build (None from it: compile here after all)."""
        built = building.result()
        if built is None:
            return self.compiler(rendered, self.arch)
        if built.result is None:
            return CompileResult(False, [CompileMessage("kernel.cu", 0, 0, "error", built.error)])
        return built.result

    def _record(self, arm: _Arm, evaluation: Evaluation) -> None:
        self.history.append(evaluation)
        if evaluation.status != "ok":
            arm.last_failure = evaluation

    def _render(self, arm: _Arm, point: Point) -> RenderedKernel | str:
        """The candidate's source, or why rendering failed."""
        try:
            return arm.sketch.render(self.problem, self.arch, point, self.name)
        except Exception as e:   # a sketch bug at one point must not end the search; it is recorded
            return f"{type(e).__name__}: {e}"

    def _evaluate(self, arm: _Arm, point: Point, round_no: int, rendered: RenderedKernel | str,
                  compiling: Future[CompileResult] | None,
                  building: Future[Any] | None = None) -> Candidate | None:
        ev = Evaluation(len(self.history), round_no, arm.sketch.name, dict(point), "ok")
        if isinstance(rendered, str) or (compiling is None and building is None):
            ev.status, ev.detail = "render-error", str(rendered)
            self._record(arm, ev)
            return None
        compiled = compiling.result() if compiling is not None else self._compiled_by(building, rendered)
        if not compiled.ok:
            ev.status, ev.detail = "compile-error", compiled.first_error()
            self._record(arm, ev)
            return None
        est = estimate(self.problem, self.arch, rendered, compiled, self.work)
        ev.cost_us, ev.detail = est.time_us, "; ".join(est.notes)
        ev.resources = _resources(est, compiled, rendered)
        if math.isinf(est.time_us):
            ev.status = "cannot-launch"
            self._record(arm, ev)
            return None
        run = None
        if self.runner is not None:
            prebuilt = {"built": building.result()} if building is not None else {}
            run = self.runner.evaluate(rendered, self.problem, self.arch, **prebuilt)
        ev.verified = run.verified if run is not None else None
        if run is not None and run.verified is False:
            ev.status, ev.detail = "incorrect", f"{run.verdict}: {run.detail}"
            self._record(arm, ev)
            return None
        ev.time_us = run.time_us if run is not None and run.verified else None
        ev.score_us = ev.time_us if ev.time_us is not None else est.time_us
        if run is None and arm.best is None:     # the prior's design for this sketch
            ev.score_us /= 1 + PRIOR_MARGIN
        if self.goal == "registers" and ev.resources["registers"]:
            ev.score_us *= 1 + REGISTER_GOAL_WEIGHT * ev.resources["registers"]
        self._record(arm, ev)
        if ev.score_us < arm.score:
            arm.best, arm.best_blame = ev, blame_estimate(arm.space, est, self.arch.sms)
        if self.best is None or ev.score_us < (self.best.score_us or math.inf):
            self.best = ev
            return Candidate(rendered, compiled, est, run, ev, list(self.history))
        return None
