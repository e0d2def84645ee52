"""The device-side output check gives the numpy check's verdict, error and message on the same
output bytes (run on CPU torch; on a GPU only the device differs)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from dice_engine.ir.dtypes import BF16, BOOL, F16, F32, F64, I32, I64
from dice_engine.ir.reference import from_storage, round_to, to_storage
from dice_engine.runner.compare import POISON_BYTE, Tolerance, compare
from dice_engine.runner.device_compare import compare_on_device
from dice_engine.runner.device_reference import torch_dtype

RNG = np.random.default_rng(11)


def _both(raw: np.ndarray, ref: np.ndarray, dtype, tol, tie_values=None, tie_dim=None):
    host = compare(raw.copy(), ref, dtype, tol, tie_values, tie_dim)
    raw_t = torch.from_numpy(np.ascontiguousarray(raw).reshape(-1).view(np.uint8).copy())
    ref_t = torch.from_numpy(np.ascontiguousarray(to_storage(ref, dtype))).view(torch_dtype(dtype)) \
        if dtype.name == "bf16" else torch.from_numpy(np.ascontiguousarray(ref)).to(torch_dtype(dtype))
    ties = torch.from_numpy(tie_values) if tie_values is not None else None
    device = compare_on_device(raw_t, ref_t.reshape(ref.shape), dtype, tol, ties, tie_dim)
    return host, device


def _reference(dtype, shape=(9, 31)):
    values = RNG.uniform(-1.0, 1.0, size=shape) + np.sign(RNG.uniform(-1, 1, size=shape)) * 0.1
    return round_to(values, dtype)


def _damage(ref: np.ndarray, dtype, kind: str) -> np.ndarray:
    raw = to_storage(ref, dtype).copy()
    flat = raw.reshape(-1)
    if kind == "poison":
        flat.view(np.uint8)[: 3 * raw.itemsize] = POISON_BYTE
        flat.view(np.uint8)[10 * raw.itemsize: 11 * raw.itemsize] = POISON_BYTE
    elif kind == "nan":
        values = from_storage(flat, dtype).astype(np.float32)
        values[17] = np.nan
        flat[:] = to_storage(values, dtype)
    elif kind in ("small", "large"):
        scale = {"small": 1.0001 if dtype.is_low_precision else 1 + 2e-6, "large": 1.05}[kind]
        values = from_storage(flat, dtype).astype(np.float64)
        values[5::7] *= scale
        flat[:] = to_storage(round_to(values, dtype), dtype)
    return raw


@pytest.mark.parametrize("dtype", [F32, F16, BF16, F64], ids=lambda d: d.name)
@pytest.mark.parametrize("mode", ["elementwise", "scaled", "normwise"])
@pytest.mark.parametrize("kind", ["exact", "poison", "nan", "small", "large"])
def test_float_outputs_get_the_same_verdict_error_and_message(dtype, mode, kind):
    ref = _reference(dtype)
    tol = Tolerance(mode, 1e-2 if dtype.is_low_precision else 1e-5)
    host, device = _both(_damage(ref, dtype, kind), ref, dtype, tol)
    assert device.verdict == host.verdict
    assert device.detail == host.detail
    if host.max_rel_err is None:
        assert device.max_rel_err is None
    else:
        assert device.max_rel_err == pytest.approx(host.max_rel_err, rel=1e-6, abs=1e-12)


def test_the_verdicts_are_not_all_alike():
    ref = _reference(F32)
    verdicts = {_both(_damage(ref, F32, k), ref, F32, Tolerance("elementwise", 1e-5))[1].verdict
                for k in ("exact", "poison", "nan", "large")}
    assert verdicts == {"ok", "unwritten", "mismatch"}


@pytest.mark.parametrize("dtype", [I32, I64], ids=lambda d: d.name)
def test_integers_are_exact_and_a_result_of_minus_one_is_not_unwritten(dtype):
    ref = RNG.integers(-3, 3, size=(5, 40)).astype(dtype.numpy)
    ref[0, :4] = -1
    host, device = _both(to_storage(ref, dtype), ref, dtype, Tolerance("exact", 0))
    assert device.verdict == host.verdict == "ok"
    wrong = ref.copy()
    wrong[2, 7] += 1
    host, device = _both(to_storage(wrong, dtype), ref, dtype, Tolerance("exact", 0))
    assert (device.verdict, device.detail) == (host.verdict, host.detail)
    assert "1 of 200 elements differ (first at index (2, 7)" in device.detail


def test_bool_outputs_compare_as_truth_values():
    ref = RNG.random((4, 16)) < 0.5
    raw = to_storage(ref, BOOL).copy()
    host, device = _both(raw, ref, BOOL, Tolerance("exact", 0))
    assert device.verdict == host.verdict == "ok"
    raw[3] = POISON_BYTE
    host, device = _both(raw, ref, BOOL, Tolerance("exact", 0))
    assert (device.verdict, device.detail) == (host.verdict, host.detail) and device.verdict == "unwritten"


@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_accepts_any_index_of_an_equal_maximum(keepdim):
    values = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]], dtype=np.float32)
    shape = (2, 1) if keepdim else (2,)
    ref = np.array([1, 0], dtype=np.int64).reshape(shape)
    for picked, verdict in (([2, 0], "ok"), ([0, 0], "mismatch"), ([5, 0], "mismatch")):
        out = np.array(picked, dtype=np.int64).reshape(shape)
        host, device = _both(to_storage(out, I64), ref, I64, Tolerance("exact", 0), values, 1)
        assert device.verdict == host.verdict == verdict
