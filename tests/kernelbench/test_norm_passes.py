"""Batch norm (training), instance norm and group norm after a conv/GEMM: one statistics kernel
(a `moments` node: mean and variance in one pass over every reduced axis, adjacent or not) and
one normalize kernel that also takes the affine and the elementwise work after it (group norm
folds its statistics and affine into a scale and shift per channel first). The plans
still mean what PyTorch computes (float64 reference)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.patterns import classify
from dice_engine.kernelbench import translate
from dice_engine.kernelbench.lower import lower
from dice_engine.kernelbench.plan import heavy_in
from dice_engine.kernelbench.task import load_task
from dice_engine.kernelbench.trace import trace_task

from .conftest import TASKS
from .test_semantics import run_plans


def _anchors(stem: str) -> list[list[tuple[str, tuple | None]]]:
    lowered = lower(trace_task(load_task(TASKS / f"{stem}.py")))
    return [[(n.op, n.attr("dim")) for n in heavy_in(p.expr)] for p in lowered.plans]


@pytest.mark.parametrize("stem, conv, dims", [
    ("conv_batch_norm", "conv2d", (0, 2, 3)),           # per channel over N, H, W (not adjacent)
    ("gemm_batch_norm", "matmul", (0,)),                # per feature over the batch's rows
])
def test_a_normalization_is_one_statistics_and_one_normalize_kernel(stem, conv, dims) -> None:
    assert _anchors(stem) == [[(conv, None)], [("moments", dims)], []]


@pytest.mark.parametrize("stem, conv", [("conv_group_norm", "conv2d"),
                                        ("cov_linear_group_norm_swish", "matmul")])
def test_a_group_norm_folds_its_statistics_into_a_scale_and_shift_per_channel(stem, conv) -> None:
    """Per (sample, group) of a [N, G, C/G*HW] view, then a scale and a shift per (sample,
    channel), two small kernels over N*C values, so the pass over x is elementwise (x * scale +
    shift broadcast over the spatial axes), which the vectorized elementwise family serves."""
    anchors = _anchors(stem)
    assert anchors[:2] == [[(conv, None)], [("moments", (2,))]] and not any(anchors[2:])
    lowered = lower(trace_task(load_task(TASKS / f"{stem}.py")))
    conv_out = lowered.plans[0].out.storage
    (normalize,) = [p for p in lowered.plans[2:] if any(lowered.buffers[n.name].storage == conv_out
                                                        for n in p.leaves())]
    decls = {n.name: TensorDecl(n.name, n.dtype, n.shape) for n in normalize.leaves()}
    assert classify(Program(decls, normalize.out.name, normalize.expr)).pattern == "elementwise"


def test_instance_norms_take_one_statistics_kernel_each() -> None:
    assert _anchors("cov_conv_instance_norms") == [[("conv2d", None)], [("moments", (2, 3))],
                                                   [("moments", (2, 3))], []]


def test_the_normalize_kernel_reads_the_conv_once_and_fuses_what_follows() -> None:
    lowered = lower(trace_task(load_task(TASKS / "conv_group_norm.py")))
    conv, normalize = lowered.plans[0], lowered.plans[-1]
    ops = [o.op for o in normalize.operations()]
    assert ops[0] == "aten.group_norm" and "aten.relu" in ops and "aten.mul" in ops
    read = [lowered.buffers[n.name].storage for n in normalize.leaves()]
    assert read.count(conv.out.storage) == 1 and len(read) == 3     # the conv, the scale, the shift


@pytest.mark.parametrize("stem", ["conv_batch_norm", "cov_conv_instance_norms", "gemm_batch_norm"])
def test_mean_and_variance_are_plain_buffers_so_the_normalize_is_elementwise(stem) -> None:
    """The two halves of the written moments are buffers at offsets 0 and C of one storage: the
    normalize plan has no slice or reshape, so the elementwise families can serve it."""
    lowered = lower(trace_task(load_task(TASKS / f"{stem}.py")))
    stats, normalize = lowered.plans[-2], lowered.plans[-1]
    halves = [lowered.buffers[n.name] for n in normalize.leaves()
              if lowered.buffers[n.name].storage == stats.out.storage]
    size = int(np.prod(halves[0].shape))
    assert sorted(b.offset for b in halves) == [0, size]
    decls = {n.name: TensorDecl(n.name, n.dtype, n.shape) for n in normalize.leaves()}
    assert classify(Program(decls, normalize.out.name, normalize.expr)).pattern == "elementwise"


@pytest.mark.parametrize("stem", ["conv_batch_norm", "conv_group_norm", "cov_conv_instance_norms",
                                  "group_norm_plain"])
def test_the_plans_compute_what_the_model_computes(stem) -> None:
    got, expected, _ = run_plans(stem, seed=3)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e.numpy(), rtol=2e-4, atol=2e-5)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("stem, kernels", [("conv_batch_norm", 3), ("conv_group_norm", 5)])
def test_translations_compile_for_sm_90(stem, kernels) -> None:
    translation = translate(TASKS / f"{stem}.py", arch="sm_90", budget=1)   # nvcc, all kernels together
    assert len(translation.kernels) == kernels
    stats = translation.kernels[1]
    assert stats.result.sketch == "generic.lowered" and "dz_merge" in stats.result.source
    if stem == "conv_batch_norm":   # the variance half is passed 8 channels (32 bytes) in
        assert ".data_ptr() + 32)" in translation.text
