"""Flops and minimal DRAM bytes of problems at their concrete shapes."""
from __future__ import annotations

from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.ir.work import work


def _work(intent: str):
    return work(classify(parse_intent(intent)))


def test_elementwise_moves_each_tensor_once():
    w = _work("y = relu(a) * 2.5 + b; a, b: f32[1000]")
    assert w.dram_bytes == 3 * 1000 * 4 and w.flops == 3 * 1000 and w.gemm is None


def test_symbols_take_their_values_and_broadcast_inputs_count_once():
    w = _work("y = x + b; x: bf16[N, 64]; b: bf16[64]; N=10")
    assert w.dram_bytes == (10 * 64 + 64 + 10 * 64) * 2


def test_conv_is_an_implicit_gemm():
    w = _work("y = conv2d(x, w, padding=1); x: f32[2, 8, 16, 16]; w: f32[32, 8, 3, 3]")
    g = w.gemm
    assert (g.batch, g.m, g.n, g.k) == (1, 2 * 16 * 16, 32, 8 * 9)
    assert w.flops == 2 * g.m * g.n * g.k


def test_every_convolution_is_an_implicit_gemm_per_group():
    w = _work("y = conv3d(x, w, groups=2); x: f32[2, 8, 6, 6, 6]; w: f32[12, 4, 3, 3, 3]")
    g = w.gemm
    assert (g.batch, g.m, g.n, g.k) == (2, 2 * 4 * 4 * 4, 6, 4 * 27)
    assert w.flops == 2 * g.batch * g.m * g.n * g.k
    # stride 2, kernel 3: output positions see 9/4 of the 9 taps on average (their stride phases)
    t = _work("y = conv_transpose2d(x, w, stride=2); x: f32[1, 4, 8, 8]; w: f32[4, 6, 3, 3]")
    g = t.gemm
    assert (g.batch, g.m, g.n) == (1, 17 * 17, 6) and t.flops == 2 * 8 * 8 * 4 * 6 * 9
    assert g.k == round(t.flops / (2 * g.m * g.n))


def test_batched_matmul_and_reduction():
    w = _work("C = A @ B; A: f32[4, 64, 32]; B: f32[4, 32, 16]")
    assert (w.gemm.batch, w.gemm.m, w.gemm.n, w.gemm.k) == (4, 64, 16, 32)
    assert _work("s = sum(x, dim=1); x: f32[128, 256]").flops == 128 * 256
