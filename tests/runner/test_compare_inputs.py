"""Inputs suited to the operators, and the output checks (poison, tolerances, argmax ties)."""
from __future__ import annotations

import numpy as np
import pytest

from dice_engine.intent import parse_intent
from dice_engine.ir.dtypes import BF16, F32, I64
from dice_engine.ir.patterns import classify
from dice_engine.ir.reference import to_storage
from dice_engine.runner.compare import POISON_BYTE, Tolerance, compare, tolerance_for
from dice_engine.runner.inputs import draw_inputs, odd_bindings, positive_inputs, shapes_to_check


def poisoned(n: int, dtype) -> np.ndarray:
    storage = to_storage(np.zeros(1), dtype).dtype
    return np.full(n * storage.itemsize, POISON_BYTE, np.uint8).view(storage)


def test_inputs_reaching_log_sqrt_or_a_divisor_are_positive():
    program = parse_intent("y = log(a + b) / sqrt(c) + d / e; a, b, c, d, e: f32[64]")
    assert positive_inputs(program) == {"a", "b", "c", "e"}
    drawn = draw_inputs(program, {}, np.random.default_rng(0))
    assert all((drawn[n] >= 0.5).all() for n in "abce")
    assert (drawn["d"] < 0).any() and (np.abs(drawn["d"]) >= 0.1).all()   # signed, never zero


def test_bf16_inputs_hold_representable_values():
    program = parse_intent("y = x * 2.0; x: bf16[1000]")
    x = draw_inputs(program, {}, np.random.default_rng(1))["x"]
    bits = to_storage(x, BF16)
    assert np.array_equal((bits.astype(np.uint32) << 16).view(np.float32), x)


def test_symbolic_intents_are_checked_at_an_odd_shape_too():
    program = parse_intent("y = relu(x); x: f32[N, 1000]; N=4096")
    assert shapes_to_check(program) == [{"N": 4096}, {"N": 2047}]
    assert all(v % 2 == 1 for v in odd_bindings({"A": 1024, "B": 7}).values())
    assert shapes_to_check(parse_intent("y = relu(x); x: f32[10]")) == [{}]


def test_untouched_output_elements_are_unwritten():
    ref = np.arange(1, 9, dtype=np.float32)
    raw = to_storage(ref, F32)
    raw[3] = poisoned(1, F32)[0]
    result = compare(raw, ref, F32, Tolerance("elementwise", 1e-5))
    assert result.verdict == "unwritten" and "1 of 8" in result.detail and "(3,)" in result.detail


def test_an_integer_result_equal_to_the_poison_pattern_is_not_unwritten():
    ref = np.array([-1, 2, -1], dtype=np.int64)            # -1 is all 0xFF bytes
    assert compare(to_storage(ref, I64), ref, I64, Tolerance("exact", 0)).verdict == "ok"


@pytest.mark.parametrize("error, verdict", [(3e-6, "ok"), (3e-5, "mismatch")])
def test_f32_elementwise_tolerance_is_1e_5(error, verdict):
    program = parse_intent("y = exp(x); x: f32[256]")
    tol = tolerance_for(classify(program))
    assert tol == Tolerance("elementwise", 1e-5)
    ref = np.linspace(0.5, 2.0, 256).astype(np.float32)
    out = (ref * (1 + error)).astype(np.float32)
    assert compare(to_storage(out, F32), ref, F32, tol).verdict == verdict


def test_gemm_is_checked_normwise_and_low_precision_looser():
    assert tolerance_for(classify(parse_intent("C = A @ B; A: f32[8, 8]; B: f32[8, 8]"))) == \
        Tolerance("normwise", 1e-4)
    assert tolerance_for(classify(parse_intent("C = A @ B; A: f16[8, 8]; B: f16[8, 8]"))).limit == 1e-2
    reduction = classify(parse_intent("s = sum(x, dim=1); x: f32[8, 8]"))
    assert tolerance_for(reduction) == Tolerance("scaled", 1e-4)


def test_tf32_products_are_checked_at_the_tf32_tolerance_and_plain_f32_stays_tight():
    tf32 = classify(parse_intent("C = A @ B; A: f32[8, 8]; B: f32[8, 8]; precision=tf32"))
    assert tolerance_for(tf32) == Tolerance("normwise", 2e-3)
    ref = np.linspace(0.5, 2.0, 256).astype(np.float32)
    rounded = (ref * (1 + 5e-4)).astype(np.float32)   # one TF32 rounding step off everywhere
    assert compare(to_storage(rounded, F32), ref, F32, tolerance_for(tf32)).verdict == "ok"
    plain = tolerance_for(classify(parse_intent("C = A @ B; A: f32[8, 8]; B: f32[8, 8]")))
    assert compare(to_storage(rounded, F32), ref, F32, plain).verdict == "mismatch"


def test_nan_outputs_are_a_mismatch():
    ref = np.ones(4, dtype=np.float32)
    out = ref.copy()
    out[2] = np.nan      # a quiet NaN, not the all-ones poison pattern
    result = compare(to_storage(out, F32), ref, F32, Tolerance("scaled", 1e-4))
    assert result.verdict == "mismatch" and "NaN" in result.detail


def test_argmax_accepts_an_index_holding_an_equal_maximum():
    values = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]], dtype=np.float32)
    ref = np.array([1, 0], dtype=np.int64)
    tie = np.array([2, 0], dtype=np.int64)
    wrong = np.array([0, 0], dtype=np.int64)
    exact = Tolerance("exact", 0)
    assert compare(to_storage(tie, I64), ref, I64, exact, values, 1).verdict == "ok"
    assert compare(to_storage(wrong, I64), ref, I64, exact, values, 1).verdict == "mismatch"
