"""The benchmark's CPU-side parts: the suite, the candidate plan, the PyTorch baseline (checked
against the reference evaluator on shrunk shapes) and the results file."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from dice_engine.arch import resolve
from dice_engine.bench.cases import SUITE
from dice_engine.bench.plan import registry_candidates
from dice_engine.bench.report import summary, to_markdown
from dice_engine.bench.suite import BenchRow
from dice_engine.runner.torch_program import torch_function
from dice_engine.intent import parse_intent
from dice_engine.ir import reference
from dice_engine.ir.patterns import classify
from dice_engine.runner.inputs import draw_inputs
from dice_engine.runner.metrics import Ceilings


def test_the_suite_covers_the_kernelbench_families_at_scale():
    assert len(SUITE) >= 25 and len({c.name for c in SUITE}) == len(SUITE)
    assert {c.family for c in SUITE} >= {"matmul", "activation", "softmax", "norm", "reduction", "scan",
                                         "transpose", "conv2d", "pool"}
    dtypes = " ".join(c.intent for c in SUITE)
    assert all(d in dtypes for d in ("f32[", "f16[", "bf16["))


def _shrunk(intent: str) -> str:
    """The intent with every extent over 48 cut to 48 (and norm sizes kept consistent)."""
    return re.sub(r"\d{3,}", lambda m: str(min(int(m.group()), 48)), intent)


@pytest.mark.parametrize("case", SUITE, ids=[c.name for c in SUITE])
def test_the_pytorch_baseline_computes_the_intent(case):
    program = parse_intent(_shrunk(case.intent))
    inputs = draw_inputs(program, {}, np.random.default_rng(0))
    expected = reference.evaluate(program, inputs, {}).astype(np.float64)
    tensors = {n: torch.from_numpy(np.ascontiguousarray(a)).to(getattr(torch, program.inputs[n].dtype.torch))
               for n, a in inputs.items()}
    got = torch_function(program)(tensors).to(torch.float64).numpy()
    scale = np.abs(expected).max() + 1e-30
    limit = 2e-2 if any(d.dtype.is_low_precision for d in program.inputs.values()) else 1e-5
    assert np.abs(got - expected).max() / scale < limit


def test_the_plan_puts_every_sketch_default_first():
    problem = classify(parse_intent("s = sum(x, dim=1); x: f32[8192, 8192]"))
    arch = resolve("H200")
    plan = registry_candidates(problem, arch, per_sketch=2, limit=6)
    sketches = {s.name for s, _ in plan}
    firsts = plan[:len(sketches)]
    assert all(point == sketch.default_point(problem, arch) for sketch, point in firsts)
    assert all(sketch.space(problem, arch).is_legal(point) for sketch, point in plan)
    assert len({(s.name, tuple(sorted(p.items()))) for s, p in plan}) == len(plan)


def test_exploration_adds_distinct_legal_points_reproducibly():
    problem = classify(parse_intent("y = softmax(x, dim=1); x: f16[4096, 8192]"))
    arch = resolve("H200")
    base = registry_candidates(problem, arch, per_sketch=2, limit=6)
    wide = registry_candidates(problem, arch, per_sketch=2, limit=6, explore=5)
    assert wide[:len(base)] == base and len(wide) == len(base) + 5 * len({s.name for s, _ in base})
    assert all(sketch.space(problem, arch).is_legal(point) for sketch, point in wide)
    assert len({(s.name, tuple(sorted(p.items()))) for s, p in wide}) == len(wide)
    assert wide == registry_candidates(problem, arch, per_sketch=2, limit=6, explore=5)


def _row(case: str, bound: str, dtype: str, dice: float, torch_us: float, **kw) -> BenchRow:
    return BenchRow(case, "f", "intent", "x[8]", dtype, bound, sketch="s", correct=True, verdict="ok",
                    dice_us=dice, torch_us=torch_us, **kw)


def test_results_state_the_targets_and_who_misses_them():
    ceilings = Ceilings("H200", 4000.0, {"f32": 50.0, "f16": 700.0})
    rows = [_row("relu", "memory", "f32", 100.0, 120.0, gbps=3800.0, roofline_fraction=0.95),
            _row("softmax", "memory", "f32", 100.0, 80.0, gbps=3000.0, roofline_fraction=0.75),
            _row("mm32", "compute", "f32", 100.0, 90.0, roofline_fraction=0.7),
            _row("mm16", "compute", "f16", 100.0, 100.0, roofline_fraction=0.65),
            BenchRow("conv", "conv2d", "intent", "x[8]", "f32", "compute", verdict="no verified candidate")]
    s = summary(rows, ceilings)
    assert s["correct"] == 4
    assert s["geomean_speedup_vs_eager"] == pytest.approx((1.2 * 0.8 * 0.9 * 1.0) ** 0.25)
    assert s["memory_bound_below_target"] == [("softmax", 0.75)]
    assert s["gemm_below_target"] == [("mm32", 0.7)]
    text = to_markdown(rows, {"date": "2026-12-02", "gpu": "H200", "arch": "sm_90", "driver": "580",
                              "ceilings_obj": ceilings})
    assert "| relu | x[8] | f32 | 100.0 | 120.0 | 1.20 |" in text
    assert "| conv | x[8] | f32 | — | — | — |" in text and "NO: no verified candidate" in text
    assert "softmax (75%)" in text and "mm32 (70%)" in text
