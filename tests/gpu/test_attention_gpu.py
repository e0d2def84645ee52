"""The fused attention kernel on a GPU: checked by the runner against PyTorch's meaning (its
device reference) on fresh random inputs with poisoned outputs, and timed beside PyTorch eager,
at small ragged shapes and at its largest head dimension. Skips without a GPU."""

from __future__ import annotations

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches.attention import FusedAttention

pytestmark = pytest.mark.gpu

INTENTS = [
    "y = scaled_dot_product_attention(q, k, v); "
    "q: f32[2, 3, 100, 64]; k: f32[2, 3, 77, 64]; v: f32[2, 3, 77, 48]",
    "y = scaled_dot_product_attention(q, k, v, is_causal=True); q, k, v: f32[4, 8, 256, 64]",
    "y = scaled_dot_product_attention(q, k, v); q, k, v: f16[4, 8, 512, 128]",
    # the largest head dimension it fuses (KernelBench L1 #97's 1024 goes to GEMM + softmax + GEMM)
    "y = scaled_dot_product_attention(q, k, v); q, k, v: f32[32, 32, 512, 256]",
]


@pytest.mark.parametrize("intent", INTENTS, ids=["ragged", "causal", "f16", "head-dim-256"])
def test_fused_attention_is_correct_and_timed_on_the_gpu(runner, intent: str) -> None:
    problem = classify(parse_intent(intent))
    sketch = FusedAttention()
    space = sketch.space(problem, ARCHS["sm_90"])
    for point in [sketch.default_point(problem, ARCHS["sm_90"]), *space.corners()]:
        rendered = sketch.render(problem, ARCHS["sm_90"], point, "attn")
        report = runner.evaluate(rendered, problem, "sm_90", time=True)
        assert report.verdict == "ok", (point, report.detail)
        assert report.verified is True
        print(f"\n{intent[:60]} {point}: {report.time_us} us, torch eager {report.reference_time_us} us")
