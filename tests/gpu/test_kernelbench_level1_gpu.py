"""The KernelBench level-1 intents (shrunk shapes) served by the engine with a GPU runner: the
search measures its candidates (the families and the general lowering) and the winner must be
verified against the float64 reference on fresh random inputs with poisoned outputs. And the
general lowering's own default kernel for each task, verified the same way. Skips without a GPU."""
from __future__ import annotations

from pathlib import Path

import pytest

from dice_engine.api import CUDAGenerator
from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.lowering import GeneralLowering

TASKS = [line.split("\t") for line in
         (Path(__file__).parents[1] / "data" / "kernelbench_level1.tsv").read_text().splitlines()
         if line and not line.startswith("#")]
IDS = [t[0].split("_")[0] for t in TASKS]

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("task, exact, shrunk", TASKS, ids=IDS)
def test_the_general_lowering_is_right_on_the_gpu(runner, task: str, exact: str, shrunk: str) -> None:
    problem = classify(parse_intent(shrunk))
    sketch = GeneralLowering()
    rendered = sketch.render(problem, ARCHS["sm_90"], sketch.default_point(problem, ARCHS["sm_90"]), "kb")
    report = runner.evaluate(rendered, problem, "sm_90", time=False)
    assert report.verdict == "ok", report.detail


@pytest.mark.parametrize("task, exact, shrunk", TASKS, ids=IDS)
def test_the_engine_serves_each_task_verified(runner, task: str, exact: str, shrunk: str) -> None:
    result = CUDAGenerator(arch="sm_90", runner=runner, budget=2).generate(shrunk)
    assert result.verified is True, result.report()
