"""Every KernelBench level-1 task as an intent (tests/data/kernelbench_level1.tsv, also listed in
docs/kernelbench_level1.md): each parses at the task's exact shapes and some sketch serves it
on sm_80 and sm_90; (slow) each generates through the engine without a GPU; (slow) the kernel
the general lowering writes for the shrunk shapes runs on the CPU emulator and matches the
float64 reference. The GPU check at exact shapes is tests/gpu/test_kernelbench_level1_gpu.py."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dice_engine.api import CUDAGenerator
from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches.registry import candidates, why_unsupported

sys.path.insert(0, str(Path(__file__).parent / "sketches"))
from cpu_emulation import assert_matches_reference, needs_emulator  # noqa: E402
from test_lowering_emulated import Emulated  # noqa: E402

TASKS = [line.split("\t") for line in
         (Path(__file__).parent / "data" / "kernelbench_level1.tsv").read_text().splitlines()
         if line and not line.startswith("#")]
IDS = [t[0].split("_")[0] for t in TASKS]


def test_all_one_hundred_tasks_are_listed() -> None:
    assert sorted(int(i) for i in IDS) == list(range(1, 101))


@pytest.mark.parametrize("task, exact, shrunk", TASKS, ids=IDS)
def test_every_task_has_a_served_intent(task: str, exact: str, shrunk: str) -> None:
    for text in (exact, shrunk):
        problem = classify(parse_intent(text))
        for arch in ("sm_80", "sm_90"):
            assert candidates(problem, ARCHS[arch]), why_unsupported(problem, ARCHS[arch])


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("task, exact, shrunk", TASKS, ids=IDS)
def test_every_task_generates_without_a_gpu(task: str, exact: str, shrunk: str, arch: str) -> None:
    result = CUDAGenerator(arch=arch, budget=2).generate(exact)
    assert result.source and result.verified is None


@pytest.mark.slow
@needs_emulator
@pytest.mark.parametrize("task, exact, shrunk", TASKS, ids=IDS)
def test_every_task_is_right_on_the_cpu_emulator(task: str, exact: str, shrunk: str, tmp_path) -> None:
    problem = classify(parse_intent(shrunk))
    sketch = Emulated()
    point = sketch.default_point(problem, ARCHS["sm_90"])
    assert_matches_reference(sketch, problem, {**point, "threads": 64}, tmp_path)
