"""The IR's slice and pad views: Python's slicing rules and constant padding, the float64
reference and the torch evaluators agreeing with PyTorch, and clear refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from dice_engine.ir.dtypes import F32
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.ops import OpError, input_tensor, make
from dice_engine.ir.reference import evaluate
from dice_engine.runner.torch_program import torch_function

SHAPE = (3, 11)


def _both(node, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    program = Program({"x": TensorDecl("x", F32, SHAPE)}, "y", node)
    ref = evaluate(program, {"x": x})
    via_torch = torch_function(program)({"x": torch.from_numpy(x)}).numpy()
    return ref, via_torch


@pytest.mark.parametrize(
    "start, end, step",
    [(None, None, 1), (2, None, 1), (1, None, 2), (None, -1, 3), (-4, None, 1), (3, 100, 4), (-100, 5, 2),
     (10, 11, 1)],
)
def test_slice_follows_python_slicing(start, end, step):
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    node = make("slice", [input_tensor("x", F32, SHAPE)], dim=1, start=start, end=end, step=step)
    want = x[:, slice(start, end, step)]
    assert node.shape == want.shape
    ref, via_torch = _both(node, x)
    np.testing.assert_array_equal(ref, want)
    np.testing.assert_array_equal(via_torch, want)


def test_slice_of_a_slice_composes():
    x = np.arange(33, dtype=np.float32).reshape(SHAPE)
    inner = make("slice", [input_tensor("x", F32, SHAPE)], dim=-1, start=1, step=2)
    node = make("slice", [inner], dim=0, start=-2)
    ref, _ = _both(node, x)
    np.testing.assert_array_equal(ref, x[-2:, 1::2])


@pytest.mark.parametrize(
    "pads, value", [(((0, 0), (2, 1)), 0.0), (((1, 2), (0, 3)), -1.5), (((1, 0), (0, 0)), 7)]
)
def test_pad_matches_torch_constant_pad(pads, value):
    x = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    node = make("pad", [input_tensor("x", F32, SHAPE)], pads=pads, value=value)
    flat = [v for pair in reversed(pads) for v in pair]
    want = F.pad(torch.from_numpy(x), flat, value=float(value)).numpy()
    assert node.shape == want.shape
    ref, via_torch = _both(node, x)
    np.testing.assert_array_equal(ref, want)
    np.testing.assert_array_equal(via_torch, want)


@pytest.mark.parametrize(
    "op, attrs, message",
    [
        ("slice", {"dim": 1, "start": 5, "end": 5}, "is empty"),
        ("slice", {"dim": 1, "step": 0}, "step must be positive"),
        ("slice", {"dim": 2}, "out of range"),
        ("pad", {"pads": ((1, 1),)}, "one (before, after) pair"),
        ("pad", {"pads": ((0, 0), (-1, 0))}, ">= 0"),
    ],
)
def test_bad_slices_and_pads_are_refused(op, attrs, message):
    with pytest.raises(OpError) as e:
        make(op, [input_tensor("x", F32, SHAPE)], **attrs)
    assert message in str(e.value)
