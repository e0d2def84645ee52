"""The one-pass mean/variance stage (`moments`, lowering/moments.py) on the CPU emulator against
the float64 reference: per channel over non-adjacent axes (the block layout), per column over
rows (the thread layout), one slice and several (the merge kernel), and an offset large next to
the spread, where E[x²] − E[x]² would lose every digit; then the statistics and normalize plans
of batch and group norm KernelBench tasks at the lowering's default point. No GPU needed."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from dice_engine.arch import ARCHS
from dice_engine.ir.dtypes import F32
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.ops import input_tensor, make
from dice_engine.ir.patterns import classify
from dice_engine.kernelbench.lower import lower
from dice_engine.kernelbench.task import load_task
from dice_engine.kernelbench.trace import trace_task
from dice_engine.lowering import GeneralLowering
from dice_engine.lowering.moments import layout
from dice_engine.lowering.plan import make_plan

sys.path.insert(0, str(Path(__file__).parents[1] / "sketches"))
from cpu_emulation import assert_matches_reference, needs_emulator, random_inputs  # noqa: E402
from test_lowering_emulated import ALLOCATOR  # noqa: E402

TASKS = Path(__file__).parents[1] / "kernelbench" / "tasks"


class Emulated(GeneralLowering):
    def render(self, *args):
        rendered = super().render(*args)
        return dataclasses.replace(rendered, source=ALLOCATOR + rendered.source)


def _program(shape: tuple[int, ...], dims: tuple[int, ...]) -> Program:
    x = input_tensor("x", F32, shape)
    return Program({"x": TensorDecl("x", F32, shape)}, "y", make("moments", [x], dim=dims))


def _point(threads: int, slices: int, items: int = 4) -> dict:
    return {"threads": threads, "strategy": "block", "items": items, "unroll": 1, "fuse": "kernels",
            "tile": 0, "slices": slices}


CASES = [((4, 3, 5, 7), (0, 2, 3), "block"), ((40, 6), (0,), "thread"), ((2, 6, 3, 50), (1, 3), "block"),
         ((3, 4, 9), (0, 1), "thread"), ((6, 5, 16), (2,), "thread"), ((2, 7, 5, 13), (1, 3), "block")]


@pytest.mark.parametrize("shape, dims, walk", CASES)
def test_layout_follows_the_contiguous_axis(shape, dims, walk) -> None:
    assert layout(make_plan(_program(shape, dims).output).stages[0]) == walk


@needs_emulator
@pytest.mark.parametrize("slices, items", [(1, 1), (8, 4), (1, 8)])
@pytest.mark.parametrize("shape, dims, walk", CASES)
def test_moments_match_the_reference(shape, dims, walk, slices, items, tmp_path) -> None:
    problem = classify(_program(shape, dims))
    assert problem.pattern == "program"
    point = _point(64, slices, items)
    rendered = Emulated().render(problem, ARCHS["sm_90"], point, "m")
    assert len(rendered.kernel_names) == (2 if slices > 1 else 1)
    assert_matches_reference(Emulated(), problem, point, tmp_path)


@needs_emulator
def test_a_large_offset_keeps_the_variance(tmp_path) -> None:
    """mean 1e4, spread 1: float32 E[x²] − E[x]² would be off by ~1e8 · 6e-8 = 6 (all of it)."""
    problem = classify(_program((8, 4, 6, 10), (0, 2, 3)))
    inputs = random_inputs(problem, {})
    inputs["x"] = (inputs["x"] + 1e4).astype(np.float32)
    assert_matches_reference(Emulated(), problem, _point(64, 4), tmp_path, inputs=inputs)


@needs_emulator
@pytest.mark.parametrize("stem", ["conv_batch_norm", "conv_group_norm", "gemm_batch_norm"])
def test_statistics_and_normalize_plans_match_the_reference(stem, tmp_path) -> None:
    lowered = lower(trace_task(load_task(TASKS / f"{stem}.py")))
    stats = {b.name for b in lowered.buffers.values() if b.storage == lowered.plans[1].out.storage}
    for k, plan in enumerate(lowered.plans[1:]):      # the conv/GEMM kernels have tests of their own
        decls = {n.name: TensorDecl(n.name, n.dtype, n.shape) for n in plan.leaves()}
        problem = classify(Program(decls, plan.out.name, plan.expr))
        inputs = random_inputs(problem, {})
        for name in stats & set(inputs):              # a variance is never negative
            inputs[name] = np.abs(inputs[name])
        work = tmp_path / str(k)
        work.mkdir()
        point = Emulated().default_point(problem, ARCHS["sm_90"])
        assert_matches_reference(Emulated(), problem, point, work, inputs=inputs)


def test_the_pytorch_baseline_means_the_same() -> None:
    """runner/torch_program (what the runner times PyTorch with) agrees with the float64 evaluator."""
    import torch

    from dice_engine.ir import reference
    from dice_engine.runner.torch_program import torch_function

    program = _program((4, 3, 5, 7), (0, 2, 3))
    x = np.random.default_rng(1).standard_normal((4, 3, 5, 7)).astype(np.float32) + 2.0
    got = torch_function(program)({"x": torch.from_numpy(x)}).double().numpy()
    want = reference.evaluate(program, {"x": x}, {})
    assert got.shape == (2, 1, 3, 1, 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@needs_emulator
@pytest.mark.parametrize("slices, items", [(1, 4), (8, 1)])
def test_two_million_elements_are_as_accurate_as_pytorch(slices, items, tmp_path) -> None:
    """One statistic over 2^21 elements (mean 3, spread 1), 64 threads (32768 elements each):
    the float32 result stays within 1e-6 relative of float64 (a few units of float32 roundoff),
    or within twice torch.var_mean's CPU error where that is larger. Measured: about 1e-7
    (1-3 ulp); torch on the CPU about 2e-8."""
    import torch

    from cpu_emulation import run_on_cpu

    program = _program((2, 1, 1024, 1024), (0, 2, 3))
    problem = classify(program)
    x = (np.random.default_rng(7).standard_normal((2, 1, 1024, 1024)) + 3.0).astype(np.float32)
    rendered = Emulated().render(problem, ARCHS["sm_90"], _point(64, slices, items), "big")
    got = run_on_cpu(rendered, problem, {"x": x}, {}, tmp_path).astype(np.float64).reshape(2)
    wide = x.astype(np.float64)
    want = np.array([wide.mean(), wide.var()])
    var, mean = torch.var_mean(torch.from_numpy(x), dim=(0, 2, 3), correction=0)
    torch_error = np.abs(np.array([mean.item(), var.item()]) - want) / np.abs(want)
    error = np.abs(got - want) / np.abs(want)
    print(f"slices={slices} items={items}: relative error (mean, var) DICE {error}, torch {torch_error}")
    assert np.all(error <= np.maximum(2 * torch_error, 1e-6)), (error, torch_error)


@needs_emulator
def test_work_on_the_moments_runs_after_them(tmp_path) -> None:
    """A program that goes on computing with the moments keeps them in workspace and maps over
    them in a second stage (not an epilogue the moments kernel would drop)."""
    shape = (5, 4, 33)
    x = input_tensor("x", F32, shape)
    stats = make("moments", [x], dim=(0, 2))
    program = Program({"x": TensorDecl("x", F32, shape)}, "y", make("mul", [stats, stats]))
    plan = make_plan(program.output)
    assert [s.combine for s in plan.stages] == ["welford", None] and plan.epilogue_of is None
    assert_matches_reference(Emulated(), classify(program), _point(64, 2), tmp_path)
