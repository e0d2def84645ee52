"""The cov_* task files: operators and argument forms a held-out KernelBench set may use
(slices, concatenation, padding, broadcasting copies, activations, reductions with indices,
norms, matmul forms, pools, upsampling, losses, level-2 chains). Each one either means what
PyTorch computes (the kernel plans through the float64 reference) or is refused in one line
naming the operator and the line of forward. The cov_h* files (28 single operators at odd shapes,
12 level-2 chains, three in fp16) were written from its own knowledge of PyTorch by a helper that
had not read the front end."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from dice_engine.kernelbench import Unmapped, translate
from dice_engine.kernelbench.lower import lower
from dice_engine.kernelbench.task import load_task
from dice_engine.kernelbench.trace import trace_task

from .conftest import TASKS
from .test_semantics import run_plans

COVERAGE = sorted(p.stem for p in TASKS.glob("cov_*.py"))
# stem -> (the operator refused, the line of forward, a word of the reason)
REFUSED = {"cov_dropout_train": ("aten.dropout", 13, "random")}
SERVED = [s for s in COVERAGE if s not in REFUSED]
# the files whose operators are new index maps (slices, cat, pad, broadcasts): compiled for sm_90
INDEX_MAPS = [
    "cov_exclusive_cumsum",
    "cov_slice_step",
    "cov_select_narrow",
    "cov_cat_two_convs",
    "cov_stack_mean",
    "cov_chunk_gate",
    "cov_pad_constant",
    "cov_pad_modes",
    "cov_expand_repeat",
    "cov_interpolate_nearest",
    "cov_pixel_shuffle",
]


LOW_PRECISION_TOLERANCE = {torch.float16: (2e-3, 1e-3), torch.bfloat16: (1.6e-2, 8e-3)}


def test_there_are_at_least_thirty_files():
    assert len(COVERAGE) >= 30 and set(INDEX_MAPS) <= set(SERVED)


@pytest.mark.parametrize("stem", SERVED)
def test_plans_compute_what_pytorch_computes(stem):
    for seed in (0, 1):
        got, expected, _ = run_plans(stem, seed)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == tuple(e.shape)
            # 16-bit results: the reference rounds once, PyTorch's CPU kernels may round between
            # steps, so they differ by an ulp (2^-10 relative in fp16, 2^-7 in bf16)
            rtol, atol = LOW_PRECISION_TOLERANCE.get(e.dtype, (2e-4, 2e-5))
            expected = e.float().numpy() if e.dtype in LOW_PRECISION_TOLERANCE else e.numpy()
            np.testing.assert_allclose(g, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("stem", sorted(REFUSED))
def test_refused_in_one_line(stem):
    op, line, why = REFUSED[stem]
    with pytest.raises(Unmapped) as e:
        lower(trace_task(load_task(TASKS / f"{stem}.py")))
    assert (e.value.op, e.value.line) == (op, line)
    assert why in str(e.value) and "\n" not in str(e.value)


def test_slices_fuse_into_their_consumer():
    """x[:, 1::2] * 2 + relu(x[:, :-1:2]) - mean(...): the strided reads are index maps inside the
    kernels, not copies; the only buffers read are the input and the mean."""
    lowered = lower(trace_task(load_task(TASKS / "cov_slice_step.py")))
    assert len(lowered.plans) == 2
    ops = {n.op for p in lowered.plans for n in p.expr.walk()}
    assert "slice" in ops
    final = lowered.plans[-1]
    assert {b.name for b in final.leaves()} == {"in_x", lowered.plans[0].out.name}


def test_exclusive_cumsum_is_one_scan_of_a_padded_view():
    """zeros_like(x.select(..)) takes only a shape: nothing computes it. The zero column the cat
    puts in front is a pad with the scan's identity, which the scan absorbs: one scan whose
    operand is x narrowed and padded (read in place), no intermediate written."""
    lowered = lower(trace_task(load_task(TASKS / "cov_exclusive_cumsum.py")))
    (plan,) = lowered.plans
    assert plan.expr.op == "cumsum" and plan.expr.args[0].op == "pad"
    assert plan.expr.args[0].args[0].op == "slice" and plan.expr.args[0].attr("value") == 0
    assert {b.name for b in plan.leaves()} == {"in_x"}
    assert [o.op for o in plan.operations()] == ["aten.narrow", "aten.cat", "aten.cumsum"]   # the report's


@pytest.mark.parametrize("pieces, dim, pads, value", [
    ("[z, s]", 1, ((0, 0), (1, 0)), 0.0),         # a zero column in front
    ("[s, o, o]", 1, ((0, 0), (0, 2)), 1.0),      # ones appended
    ("[z, s, z]", 0, ((1, 1), (0, 0)), 0.0),      # zeros either side of the rows
])
def test_constant_pieces_of_a_concatenation_are_a_pad(pieces, dim, pads, value):
    from dice_engine.ir import ops
    from dice_engine.ir.dtypes import F32
    from dice_engine.kernelbench.aten_slicing import concatenate, full

    x = ops.input_tensor("x", F32, (3, 5))
    s = ops.make("cumsum", [x], dim=1)
    z = full((1, 5) if dim == 0 else (3, 1), 0.0, F32)
    o = full((3, 1), 1.0, F32)
    cat = concatenate(eval(pieces, {"z": z, "s": s, "o": o}), dim)
    padded = cat.args[0] if cat.op == "cumsum" else cat   # zeros around a cumsum sink into it
    assert padded.op == "pad" and padded.attr("pads") == pads and padded.attr("value") == value
    assert (cat.op == "cumsum") == (value == 0.0 and pads[1][1] == 0)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_index_map_files_compile_for_sm_90():
    for stem in INDEX_MAPS:
        translation = translate(TASKS / f"{stem}.py", arch="sm_90", budget=1)  # nvcc, all kernels together
        assert translation.kernels and "class ModelNew" in translation.text, stem


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs torch with a CUDA GPU")
@pytest.mark.parametrize("stem", SERVED)
def test_coverage_model_new_passes_the_protocol(stem, translations):
    from dice_engine.kernelbench.evaluate import evaluate

    _, path = translations[stem]
    result = evaluate(str(TASKS / f"{stem}.py"), str(path), trials=5)
    assert result["correct"] is True, result["message"]


@pytest.mark.parametrize(
    "call, inputs, op, why",
    [
        ("F.adaptive_max_pool2d(x0, 2, return_indices=True)[1]", "torch.randn(1, 2, 4, 4)",
         "output", "indices adaptive_max_pool returns"),
        ("torch.nn.functional.interpolate(x0, scale_factor=1.5, mode='nearest-exact')",
         "torch.randn(1, 2, 4, 4)",
         "aten._upsample_nearest_exact2d", "no mapping"),
        ("torch.nn.functional.pad(x0, (3, 0), mode='reflect')", "torch.randn(1, 2, 3)",
         None, "Padding size should be less"),
        ("torch.nn.functional.rrelu(x0, training=True)", "torch.randn(4, 4)", "aten.rrelu", "random"),
        ("torch.cat([x0, x1], dim=1)", "torch.randn(2, 3), torch.randn(3, 3)", None, "Sizes of tensors"),
    ],
)
def test_index_map_uses_without_an_ir_form_are_refused_in_one_line(tmp_path, call, inputs, op, why):
    from dice_engine.kernelbench import TaskError

    from .test_new_mappings import _task

    path = _task(tmp_path, call.replace("F.", "torch.nn.functional."), inputs)
    with pytest.raises((Unmapped, TaskError)) as e:
        lower(trace_task(load_task(path)))
    message = str(e.value)
    assert why in message and "\n" not in message, message
    if op is not None:
        assert e.value.op == op, message
