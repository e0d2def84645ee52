"""The evaluation's comparison works slice by slice (tensors of 10^9 elements must not be copied
to float64 whole); slicing must not change its verdict. Runs on CPU tensors."""

from __future__ import annotations

import pytest
import torch

from dice_engine.kernelbench import eval_child


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(eval_child, "CHUNK", 7)


def test_a_difference_in_the_last_slice_is_found(small_chunks):
    ref = torch.randn(10, 10)
    out = ref.clone()
    assert eval_child._compare([ref], [out]) == (True, 0.0)
    out[-1, -1] += 1.0
    ok, worst = eval_child._compare([ref], [out])
    assert not ok and worst == pytest.approx(1.0)


def test_nans_must_match_and_shapes_must_agree(small_chunks):
    ref = torch.randn(5, 9)
    out = ref.clone()
    ref[4, 8] = float("nan")
    assert not eval_child._compare([ref], [out])[0]
    out[4, 8] = float("nan")
    assert eval_child._compare([ref], [out])[0]
    assert not eval_child._compare([ref], [out.reshape(9, 5)])[0]


def test_tolerance_is_relative_and_absolute(small_chunks):
    ref = torch.full((20,), 1000.0)
    assert eval_child._compare([ref], [ref + 0.05])[0]  # within 1e-4 + 1e-4 * 1000
    assert not eval_child._compare([ref], [ref + 0.2])[0]
