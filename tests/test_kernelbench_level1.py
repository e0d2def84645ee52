"""Every KernelBench level-1 task as an intent (tests/data/kernelbench_level1.tsv, also listed in
docs/kernelbench_level1.md): each parses at the task's exact shapes and some sketch serves it
on sm_80 and sm_90; (slow) each generates through the engine without a GPU; (slow) the kernel
the general lowering writes for the shrunk shapes runs on the CPU emulator and matches the
float64 reference. The GPU check at exact shapes is tests/gpu/test_kernelbench_level1_gpu.py."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from dice_engine.api import CUDAGenerator
from dice_engine.runner.torch_program import torch_function
from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir import reference
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
    inputs = _draw(problem.program, shrunk, np.random.default_rng(1))   # probabilities where logs are taken
    assert_matches_reference(sketch, problem, {**point, "threads": 64}, tmp_path, inputs=inputs)


def _draw(program, text: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {}
    for name, decl in program.inputs.items():
        shape = tuple(int(d) for d in decl.shape)
        if decl.dtype.is_float:   # kl_div reads probabilities
            if "kl_div" in text:
                values = rng.dirichlet(np.ones(shape[-1]), shape[:-1])
            else:
                values = rng.standard_normal(shape)
            out[name] = values.astype(np.float32)
        elif decl.dtype.name == "bool":
            out[name] = rng.integers(0, 2, shape).astype(bool)
        else:                     # class indices
            out[name] = rng.integers(0, 5, shape)
    return out


@pytest.mark.parametrize("task, exact, shrunk", TASKS, ids=IDS)
def test_the_torch_baseline_means_what_the_reference_means(task: str, exact: str, shrunk: str) -> None:
    """The eager baseline the GPU timing runs (bench/torch_program) against the float64 reference."""
    torch = pytest.importorskip("torch")
    program = parse_intent(shrunk)
    inputs = _draw(program, shrunk, np.random.default_rng(0))
    want = reference.evaluate(program, inputs).astype(np.float64)
    got = torch_function(program)({k: torch.from_numpy(np.asarray(v)) for k, v in inputs.items()})
    got = got.double().numpy()
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-4 * (1 + np.abs(want).max())
