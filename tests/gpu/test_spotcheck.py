"""Every sketch × every sample intent its module lists that it serves × (default point + corners),
rendered, compiled and verified against the reference on the GPU. Prints a table at the end.

Compilation runs in parallel up front (nvcc is the slow part); DICE_SPOTCHECK_CORNERS caps the
corners per (sketch, intent), DICE_SPOTCHECK_TRIALS sets the trials per candidate,
DICE_SPOTCHECK_ONLY (comma-separated sketch-name prefixes) narrows the sketches, and once
DICE_SPOTCHECK_BUDGET_S seconds have passed the remaining cases are skipped (and say so), so that
a session on a lent GPU ends with its table rather than being cut off."""
from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from dice_engine.arch import resolve
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import Problem, classify
from dice_engine.runner.build import Built, build_library, launcher_symbol
from dice_engine.sketches import registry
from dice_engine.sketches.base import RenderedKernel, Sketch

pytestmark = pytest.mark.gpu

ARCH = resolve("sm_90")
MAX_CORNERS = int(os.environ.get("DICE_SPOTCHECK_CORNERS", "4"))
TRIALS = int(os.environ.get("DICE_SPOTCHECK_TRIALS", "2"))
BUDGET_S = float(os.environ.get("DICE_SPOTCHECK_BUDGET_S", "inf"))
ONLY = tuple(p for p in os.environ.get("DICE_SPOTCHECK_ONLY", "").split(",") if p)
STARTED = time.monotonic()


@dataclass
class Case:
    sketch: Sketch
    intent: str
    point_label: str
    point: dict
    error: str = ""       # the sample intent itself does not parse (a failing case, not a crash)

    @property
    def id(self) -> str:
        return f"{self.sketch.name}|{self.intent[:60]}|{self.point_label}"


def _points(sketch: Sketch, problem: Problem) -> list[tuple[str, dict]]:
    default = sketch.default_point(problem, ARCH)
    points = [("default", default)]
    for i, corner in enumerate(sketch.space(problem, ARCH).corners()):
        if corner != default and len(points) <= MAX_CORNERS:
            points.append((f"corner{i}", corner))
    return points


def _cases() -> list[Case]:
    cases = []
    for module in {sys.modules[type(s).__module__] for s in registry.ALL_SKETCHES}:
        for intent in getattr(module, "SAMPLE_INTENTS", []):
            try:
                problem = classify(parse_intent(intent))
            except Exception as exc:   # reported by its own failing test
                cases.append(Case(module.SKETCHES[0], intent, "parse", {}, f"{type(exc).__name__}: {exc}"))
                continue
            for sketch in module.SKETCHES:
                if ONLY and not sketch.name.startswith(ONLY):
                    continue
                try:
                    if sketch.pattern != problem.pattern or sketch.unsupported(problem, ARCH) is not None:
                        continue
                    points = _points(sketch, problem)
                except Exception as exc:   # a sketch that cannot even list its points fails its own case
                    cases.append(Case(sketch, intent, "space", {}, f"{type(exc).__name__}: {exc}"))
                    continue
                cases += [Case(sketch, intent, label, point) for label, point in points]
    return sorted(cases, key=lambda c: c.id)


CASES = _cases()
Prepared = tuple["Problem | None", "RenderedKernel | None", Built]   # None where rendering failed
ROWS: list[tuple[str, str, str, str, str]] = []


def _render(index: int, case: Case) -> tuple[Problem, RenderedKernel]:
    problem = classify(parse_intent(case.intent))
    return problem, case.sketch.render(problem, ARCH, case.point, f"spot{index}")


@pytest.fixture(scope="module")
def built(runner) -> dict[str, Prepared]:
    arch = runner.gpu.get("arch", "sm_90")

    def build(item: tuple[int, Case]) -> tuple[str, Prepared] | None:
        index, case = item
        if case.error:
            return None
        try:
            problem, rendered = _render(index, case)
        except Exception as exc:   # a render failure fails this case only
            return case.id, (None, None, Built(None, f"render failed: {type(exc).__name__}: {exc}"))
        return case.id, (problem, rendered, build_library(rendered.source, rendered.compile_arch(arch)))

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        done = dict(item for item in pool.map(build, enumerate(CASES)) if item is not None)
    yield done
    print(f"\n{'sketch':28} {'point':9} {'verdict':14} {'max err':9} intent")
    for sketch, point, verdict, err, intent in ROWS:
        print(f"{sketch:28} {point:9} {verdict:14} {err:9} {intent}")
    failed = sum(1 for row in ROWS if row[2] != "ok")
    print(f"{len(ROWS)} candidates, {failed} not verified, {len(CASES) - len(ROWS)} not run (time budget)")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_sketch_point_verifies(runner, built, case):
    if time.monotonic() - STARTED > BUDGET_S:
        pytest.skip(f"spot-check time budget of {BUDGET_S:g} s spent")
    if case.error:
        ROWS.append((case.sketch.name, case.point_label, "broken", "-", case.intent))
        pytest.fail(f"the sample intent or the sketch's space failed: {case.error}")
    problem, rendered, library = built[case.id]
    if library.library is None:
        ROWS.append((case.sketch.name, case.point_label, "build-error", "-", case.intent))
        pytest.fail(f"does not build: {library.error}")
    report = runner.run_library(str(library.library), launcher_symbol(rendered), rendered, problem,
                                trials=TRIALS, time=False)
    err = f"{report.max_rel_err:.1e}" if report.max_rel_err is not None else "-"
    ROWS.append((case.sketch.name, case.point_label, report.verdict, err, case.intent))
    assert report.verdict == "ok", f"{case.point}: {report.detail}"
