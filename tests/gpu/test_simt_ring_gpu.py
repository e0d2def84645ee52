"""The CUDA-core GEMM's cp.async ring on a GPU: every layout of A and B, edges, odd sizes
(scalar copies), f64, batches, split-K and a fused epilogue, each checked by the runner against
the reference on fresh random inputs with the output poisoned first. The CPU emulator checks the
same index math and the ring's wait order (tests/sketches/test_gemm_emulated.py); this checks the
real cp.async and the dynamic shared memory past 48 KiB. Skips without a GPU."""

from __future__ import annotations

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches.gemm import SimtGemm

pytestmark = pytest.mark.gpu


def _point(bm: int, bn: int, bk: int, vector: int, buffering: int, k_splits: int = 1, tm: int = 8,
           tn: int = 8) -> dict[str, int]:
    return {"block_m": bm, "block_n": bn, "block_k": bk, "thread_m": tm, "thread_n": tn, "vector": vector,
            "buffering": buffering, "k_splits": k_splits}


CASES = [
    ("C = A @ B; A: f32[1000, 1004]; B: f32[1004, 1000]", _point(128, 128, 8, 4, 3)),
    ("C = A @ B; A: f32[1000, 1004]; B: f32[1004, 1000]", _point(128, 128, 16, 4, 4)),   # 67.6 KB
    ("C = A @ B; A: f32[777, 999]; B: f32[999, 555]", _point(128, 128, 8, 1, 4)),
    ("C = A.T @ B; A: f32[516, 260]; B: f32[516, 388]", _point(128, 128, 16, 4, 3)),
    ("C = A @ W.T; A: f32[300, 1028]; W: f32[260, 1028]", _point(64, 64, 16, 4, 4, tm=4, tn=4)),
    ("C = A.T @ W.T; A: f32[516, 260]; W: f32[388, 516]", _point(128, 128, 8, 4, 4)),
    ("C = A @ B; A: f32[8, 200, 300]; B: f32[8, 300, 100]", _point(64, 64, 16, 4, 3, tm=4, tn=4)),
    ("y = gelu(x @ W.T + b); x: f32[256, 2048]; W: f32[1024, 2048]; b: f32[1024]", _point(128, 128, 8, 4, 4)),
    ("C = A @ B; A: f32[128, 65536]; B: f32[65536, 128]", _point(128, 128, 16, 4, 3, k_splits=16)),
    ("C = A @ B; A: f64[333, 257]; B: f64[257, 129]", _point(64, 64, 8, 1, 3, tm=4, tn=4)),
]


@pytest.mark.parametrize("intent, point", CASES, ids=[f"{c[0][:40]}|b{c[1]['buffering']}k{c[1]['block_k']}"
                                                      for c in CASES])
def test_simt_ring_is_correct_on_the_gpu(runner, intent: str, point: dict[str, int]) -> None:
    problem = classify(parse_intent(intent))
    rendered = SimtGemm().render(problem, ARCHS["sm_90"], point, "ring")
    report = runner.evaluate(rendered, problem, "sm_90", time=False)
    assert report.verdict == "ok", report.detail
    assert report.verified is True
