"""A normalisation whose one-kernel form reads its input from DRAM once (its groups stay in L1
between the passes) is one plan, not a statistics kernel and a map kernel that read the input
twice; where the groups outgrow L1 the plans stay split, as before."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from dice_engine.kernelbench import translate
from dice_engine.kernelbench.lower import lower
from dice_engine.kernelbench.plan import heavy_in
from dice_engine.kernelbench.task import load_task
from dice_engine.kernelbench.trace import trace_task

from .conftest import TASKS
from .test_semantics import run_plans


def _plans(stem: str) -> list[list[str]]:
    lowered = lower(trace_task(load_task(TASKS / f"{stem}.py")))
    return [[n.op for n in heavy_in(p.expr)] for p in lowered.plans]


@pytest.mark.parametrize("stem, plans", [
    ("rms_norm_channels", [["mean"]]),            # 24 channels a column: a thread per column, in L1
    ("cov_h17_rms_norm_manual", [["mean"]]),      # rows of 1023: a block per row, in L1
    ("cov_h28_l2_normalize_dim1", [["sum"], []]),  # 257 rows a column: 256 columns a block outgrow L1
])
def test_a_normalisation_is_one_plan_only_where_it_reads_its_input_once(stem, plans) -> None:
    assert _plans(stem) == plans


@pytest.mark.parametrize("stem", ["rms_norm_channels", "cov_h17_rms_norm_manual"])
def test_the_one_plan_computes_what_the_model_computes(stem) -> None:
    got, expected, _ = run_plans(stem, seed=5)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e.numpy(), rtol=2e-5, atol=2e-6)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_one_plan_is_one_kernel_that_compiles() -> None:
    translation = translate(TASKS / "rms_norm_channels.py", arch="sm_90", budget=4)   # nvcc
    (kernel,) = translation.kernels
    assert kernel.result.sketch == "generic.lowered"
    assert "general lowering, one kernel" in kernel.result.source
