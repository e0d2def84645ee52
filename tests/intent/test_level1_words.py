"""Words (English and Chinese) for the level-1 operators that have a natural name: each becomes
the same program as its tensor form (compared through the reference on the same inputs)."""
from __future__ import annotations

import numpy as np
import pytest

from dice_engine.intent import parse_intent
from dice_engine.ir import reference

BATCH_NORM = "y = batch_norm(x, None, None, training=True); x: f32[4, 3, 5, 2]"   # the batch's statistics


@pytest.mark.parametrize("words, tensor_form", [
    ("instance norm of a 2x3x5x4 fp32 tensor", "y = instance_norm(x); x: f32[2, 3, 5, 4]"),
    ("实例归一化，输入为 2x3x5x4 的 FP32 张量", "y = instance_norm(x); x: f32[2, 3, 5, 4]"),
    ("batch norm of a 4x3x5x2 float32 tensor", BATCH_NORM),
    ("批量归一化 4x3x5x2 float32", BATCH_NORM),
    ("cumulative product along rows of a 6x40 fp32 matrix", "y = cumprod(x, dim=-1); x: f32[6, 40]"),
    ("前缀积 6x40 float32", "y = cumprod(x, dim=-1); x: f32[6, 40]"),
])
def test_words_mean_what_the_tensor_form_means(words: str, tensor_form: str) -> None:
    said, written = parse_intent(words), parse_intent(tensor_form)
    shape = written.inputs["x"].shape
    x = reference.round_to(np.random.default_rng(3).standard_normal(shape), written.output.dtype)
    got = reference.evaluate(said, {"x": x})
    want = reference.evaluate(written, {"x": x})
    assert got.shape == want.shape and np.allclose(got, want, rtol=1e-6, atol=1e-6)
