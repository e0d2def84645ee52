"""The implicit-GEMM conv2d sketch: GEMM sizes, constraints, defaults, the rendered text, and
nvcc/ptxas builds."""
from __future__ import annotations

from pathlib import Path

import pytest
from cpu_emulation import assert_matches_reference, needs_emulator
from layout_sketch_checks import (compile_clean, needs_nvcc, private_compile_cache, problem, serving,
                                  some_points)

from dice_engine.arch import ARCHS
from dice_engine.sketches import conv
from dice_engine.sketches.conv import ConvShape, ImplicitGemmConv, TensorCoreConv

__all__ = ["private_compile_cache"]
SM90 = ARCHS["sm_90"]
CONV = ImplicitGemmConv()
WMMA = TensorCoreConv()
HALF = "y = relu(conv2d(x, w, b, padding=1)); x: f16[16, 128, 28, 28]; w: f16[256, 128, 3, 3]; b: f16[256]"
DILATED = "y = conv2d(x, w, padding=2, dilation=2); x: bf16[N, 64, 33, 47]; w: bf16[96, 64, 3, 3]; N=3"
RESNET = "y = relu(conv2d(x, w, b, padding=1)); x: f32[16, 128, 28, 28]; w: f32[256, 128, 3, 3]; b: f32[256]"


def point(bm: int, bn: int, bk: int, tm: int, tn: int) -> dict:
    return {"block_m": bm, "block_n": bn, "block_k": bk, "thread_m": tm, "thread_n": tn}


def test_gemm_view_of_the_convolution():
    shape = ConvShape(problem("y = conv2d(x, w, b, stride=2, padding=3); x: f32[8, 3, 224, 224]; "
                              "w: f32[64, 3, 7, 7]; b: f32[64]"))
    assert (shape.out_h, shape.out_w) == (112, 112)
    assert (shape.gemm_m, shape.gemm_n, shape.gemm_k) == (8 * 112 * 112, 64, 3 * 7 * 7)
    assert shape.has_bias and shape.stride == (2, 2) and shape.padding == (3, 3)


def test_a_prologue_is_refused_and_a_broadcast_epilogue_served():
    assert "prologue" in CONV.unsupported(
        problem("y = conv2d(relu(x), w); x: f32[2, 4, 8, 8]; w: f32[4, 4, 3, 3]"), SM90)
    # KernelBench level 2's per-channel parameters: shaped (C, 1, 1) beside an NCHW output.
    assert CONV.unsupported(
        problem("y = relu(conv2d(x, w)) + s; x: f32[2, 4, 8, 8]; w: f32[4, 4, 3, 3]; s: f32[4, 1, 1]"),
        SM90) is None


def test_defaults():
    assert CONV.default_point(problem(RESNET), SM90) == point(64, 128, 8, 4, 8)
    big = problem("y = conv2d(x, w, padding=1); x: f32[32, 64, 56, 56]; w: f32[64, 64, 3, 3]")
    assert CONV.default_point(big, SM90) == point(128, 64, 8, 8, 4)
    f64 = problem("y = conv2d(x, w, stride=2); x: f64[2, 5, 17, 19]; w: f64[7, 5, 3, 3]")
    assert CONV.default_point(f64, SM90) == point(64, 64, 8, 4, 4)


def test_constraints_reject_illegal_points():
    space = CONV.space(problem(RESNET), SM90)
    assert any("threads per block" in v for v in space.violations(point(32, 32, 8, 8, 8)))      # 16 threads
    # 512 threads: 16 tap rows of 32 pixels per pass cannot tile 8 taps
    assert any("input tile" in v for v in space.violations(point(32, 128, 8, 2, 4)))
    f64 = CONV.space(problem("y = conv2d(x, w); x: f64[2, 5, 17, 19]; w: f64[7, 5, 3, 3]"), SM90)
    assert any("accumulator registers" in v for v in f64.violations(point(128, 128, 8, 8, 8)))
    assert space.is_legal(point(128, 128, 16, 8, 8))
    with pytest.raises(ValueError, match="illegal point"):
        CONV.render(problem(RESNET), SM90, point(32, 32, 8, 8, 8), "bad")


def test_text_names_the_strategy_and_fuses_bias_and_relu():
    p = problem(RESNET)
    source = CONV.render(p, SM90, CONV.default_point(p, SM90), "conv_relu").source
    header = source.splitlines()[0]
    assert "implicit GEMM" in header and "bias" in header and "fused epilogue" in header
    assert "(Acc)(b[out_channel])" in source and "fmaxf(" in source
    assert "constexpr int kBPitch = kBlockN + 4;" in source
    assert "a_tile[kBlockK][kBlockM]" in source


def test_half_precision_says_how_it_accumulates():
    p = problem("y = conv2d(x, w); x: f16[32, 256, 14, 14]; w: f16[512, 256, 1, 1]")
    source = CONV.render(p, SM90, CONV.default_point(p, SM90), "conv_half").source
    assert "SIMT f32 accumulate (no tensor cores)" in source.splitlines()[0]
    assert "using Acc = float;" in source and "__half2float(" in source and "__float2half_rn(" in source


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_sample_defaults_compile_without_spills(arch):
    rendered = [sketch.render(p, ARCHS[arch], sketch.default_point(p, ARCHS[arch]), f"sample{i}_{j}")
                for i, text in enumerate(conv.SAMPLE_INTENTS)
                for j, (sketch, p) in enumerate(serving(conv.SKETCHES, text, arch))]
    assert {r.sketch for r in rendered} == {CONV.name, WMMA.name}
    compile_clean(rendered, arch)


@needs_nvcc
@pytest.mark.parametrize("sketch, text, corners", [
    (CONV, RESNET, True),
    (CONV, DILATED, False),
    (CONV, "y = conv2d(x, w, stride=2); x: f64[2, 5, 17, 19]; w: f64[7, 5, 3, 3]", False),
    (WMMA, DILATED, True),
], ids=["simt-f32", "simt-bf16", "simt-f64", "wmma-bf16"])
def test_design_space_points_compile_without_spills(sketch, text, corners):
    p = problem(text)
    points = some_points(sketch, p, "sm_90", corners=corners)
    rendered = [sketch.render(p, SM90, pt, f"pt{k}") for k, pt in enumerate(points)]
    compile_clean(rendered, "sm_90")


@needs_emulator
@pytest.mark.parametrize("text, point", [
    ("y = relu(conv2d(x, w, b, padding=1)); x: f32[2, 5, 9, 7]; w: f32[6, 5, 3, 3]; b: f32[6]",
     point(32, 32, 8, 2, 2)),
    ("y = conv2d(x, w, stride=2, padding=2, dilation=2); x: bf16[N, 4, 11, 13]; w: bf16[40, 4, 3, 3]; N=3",
     point(64, 32, 16, 4, 2)),
    ("y = conv2d(x, w, stride=2); x: f64[2, 5, 17, 19]; w: f64[7, 5, 3, 3]", None),
    # The biased value is one operand of the epilogue's operators (KernelBench level 2's 67, 69
    # and 71 computed `acc + bias * ...`: wrong by 0.3-0.7 on an H100).
    ("y = gelu(conv2d(x, w, b)); x: f32[2, 5, 9, 7]; w: f32[6, 5, 3, 3]; b: f32[6]", point(32, 32, 8, 2, 2)),
    ("y = leaky_relu(conv2d(x, w, b) / 2.0, negative_slope=0.01); x: f32[2, 5, 9, 7]; w: f32[6, 5, 3, 3]; "
     "b: f32[6]", point(32, 32, 8, 2, 2)),
    # Epilogue operands broadcast per channel, per column and per (channel, row) (level 2's 1, 54, 82).
    ("y = relu(conv2d(x, w, b)) + s * t; x: f32[2, 5, 9, 7]; w: f32[6, 5, 3, 3]; b: f32[6]; "
     "s: f32[6, 1, 1]; t: f32[5]", point(32, 32, 8, 2, 2)),
    ("y = conv2d(x, w, padding=1) * s; x: f32[N, 3, 6, 5]; w: f32[4, 3, 3, 3]; s: f32[1, 4, 6, 1]; N=2",
     None),
], ids=["bias-relu", "strided-dilated-bf16", "f64-default", "bias-gelu", "bias-div-leaky-relu",
        "per-channel-and-column-operands", "symbolic-batch-channel-row-operand"])
def test_kernels_compute_the_reference_on_the_cpu_emulator(text, point, tmp_path):
    p = problem(text)
    assert_matches_reference(CONV, p, point or CONV.default_point(p, SM90), tmp_path)


def test_tensor_core_sketch_serves_halves_on_sm80_and_newer():
    assert WMMA.unsupported(problem(HALF), SM90) is None
    assert WMMA.unsupported(problem(HALF), ARCHS["sm_80"]) is None
    assert "sm_80" in WMMA.unsupported(problem(HALF), ARCHS["sm_75"])
    assert "f16 or bf16" in WMMA.unsupported(problem(RESNET), SM90)


def test_tensor_core_constraints_and_defaults():
    p = problem(HALF)
    assert WMMA.default_point(p, SM90) == {"block_m": 64, "block_n": 128, "block_k": 16, "warps_m": 2,
                                           "warps_n": 2}
    space = WMMA.space(p, SM90)
    too_many = {"block_m": 128, "block_n": 128, "block_k": 32, "warps_m": 2, "warps_n": 2}
    assert any("accumulator fragments" in v for v in space.violations(too_many))    # 4 x 4 per warp
    ragged = {"block_m": 32, "block_n": 64, "block_k": 16, "warps_m": 4, "warps_n": 1}
    assert any("16x16 fragments" in v for v in space.violations(ragged))


def test_tensor_core_text():
    p = problem(HALF)
    source = WMMA.render(p, SM90, WMMA.default_point(p, SM90), "conv_tc").source
    assert "#include <mma.h>" in source and "WMMA 16x16x16 f16 with f32 accumulate" in source.splitlines()[0]
    assert "wmma::mma_sync(" in source and "wmma::fragment<wmma::accumulator, 16, 16, 16, float>" in source
    assert "constexpr int kLdA = kBlockM + 8" in source


@needs_emulator
@pytest.mark.parametrize("text, wmma_point", [
    ("y = relu(conv2d(x, w, b, padding=1)); x: f16[2, 5, 9, 7]; w: f16[40, 5, 3, 3]; b: f16[40]",
     {"block_m": 64, "block_n": 32, "block_k": 16, "warps_m": 2, "warps_n": 2}),
    ("y = conv2d(x, w, stride=2, padding=2, dilation=2); x: bf16[3, 4, 11, 13]; w: bf16[20, 4, 3, 3]",
     {"block_m": 32, "block_n": 64, "block_k": 32, "warps_m": 1, "warps_n": 2}),
], ids=["f16-bias-relu", "bf16-strided-dilated"])
def test_tensor_core_kernels_compute_the_reference_on_the_cpu_emulator(text, wmma_point, tmp_path):
    assert_matches_reference(WMMA, problem(text), wmma_point, tmp_path)


@needs_emulator
def test_a_slope_read_by_index_multiplies_the_whole_biased_value(tmp_path):
    """KernelBench's conv + per-channel PReLU: the slope is read through a view of the weight (an
    indexed epilogue), and the biased value `acc + b` is one operand of `slope * value` (an H100
    run of cov_conv_prelu computed `slope * acc + b`: 0.126 off)."""
    pytest.importorskip("torch")
    from dice_engine.ir.graph import Program, TensorDecl
    from dice_engine.ir.patterns import classify
    from dice_engine.kernelbench.lower import lower
    from dice_engine.kernelbench.task import load_task
    from dice_engine.kernelbench.trace import trace_task

    tasks = Path(__file__).resolve().parent.parent / "kernelbench" / "tasks"
    plan = lower(trace_task(load_task(tasks / "cov_conv_prelu.py"))).plans[0]
    decls = {n.name: TensorDecl(n.name, n.dtype, n.shape) for n in plan.leaves()}
    p = classify(Program(decls, plan.out.name, plan.expr))
    assert CONV.unsupported(p, SM90) is None
    assert_matches_reference(CONV, p, CONV.default_point(p, SM90), tmp_path)
