"""Winograd convolutions (`conv.winograd`) on a GPU: forward and transposed, 3x3 to 5x5 and 7-tap
1-D kernels, both tile sizes, bias and epilogues, several passes through a bounded workspace, each
checked by the runner against the float64 reference on fresh random inputs with the output
poisoned first. The CPU emulator checks the same kernels at small sizes
(tests/sketches/test_conv_winograd.py); this runs them at sizes where the chunks, the embedded
GEMM's tiles and the stream-ordered workspace are real. Skips without a GPU."""

from __future__ import annotations

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches import conv_winograd

pytestmark = pytest.mark.gpu

CASES = [
    ("y = conv2d(x, w, padding=1); x: f32[8, 64, 56, 56]; w: f32[64, 64, 3, 3]", 4, 1024),
    ("y = conv2d(x, w, padding=1); x: f32[8, 64, 56, 56]; w: f32[64, 64, 3, 3]", 2, 1024),
    # KernelBench level 1's task 69 at a quarter of its batch
    ("y = conv_transpose2d(x, w); x: f32[16, 64, 128, 256]; w: f32[64, 128, 3, 5]", 4, 1024),
    # several passes of 64 MiB, the last one short
    ("y = conv_transpose2d(x, w, b, padding=1); x: f32[16, 64, 130, 126]; w: f32[64, 64, 3, 3]; b: f32[64]",
     4, 64),
    ("y = tanh(conv2d(x, w, b, padding=2)); x: f32[4, 32, 61, 67]; w: f32[48, 32, 5, 5]; b: f32[48]", 4, 256),
    ("y = conv1d(x, w, padding=3); x: f32[8, 32, 5000]; w: f32[64, 32, 7]", 2, 1024),
    ("y = conv2d(x, w); x: f32[3, 3, 224, 224]; w: f32[16, 3, 3, 3]", 4, 1024),
]


@pytest.mark.parametrize("intent, tile, chunk", CASES, ids=[f"{c[0][:48]}|t{c[1]}c{c[2]}" for c in CASES])
def test_winograd_is_correct_on_the_gpu(runner, intent: str, tile: int, chunk: int) -> None:
    problem = classify(parse_intent(intent))
    sketch = next(s for s in conv_winograd.SKETCHES if s.pattern == problem.pattern)
    assert sketch.unsupported(problem, ARCHS["sm_90"]) is None
    rendered = sketch.render(problem, ARCHS["sm_90"], {"tile": tile, "chunk_mib": chunk}, "wino")
    report = runner.evaluate(rendered, problem, "sm_90", time=False)
    assert report.verdict == "ok", report.detail
    assert report.verified is True
