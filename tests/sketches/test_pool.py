"""The direct pooling sketch: torch semantics in the text (NaN-propagating max, padding-counting
average), constraints, defaults, and nvcc/ptxas builds."""
from __future__ import annotations

import pytest
from cpu_emulation import assert_matches_reference, needs_emulator
from layout_sketch_checks import (compile_clean, needs_nvcc, private_compile_cache, problem, serving,
                                  some_points)

from dice_engine.arch import ARCHS
from dice_engine.sketches import pool
from dice_engine.sketches.pool import DirectPool

__all__ = ["private_compile_cache"]
SM90 = ARCHS["sm_90"]
POOL = DirectPool()
MAX_3S2 = "y = max_pool2d(x, kernel_size=3, stride=2, padding=1); x: f32[16, 64, 112, 112]"


def test_max_pool_ignores_padding_and_propagates_nan():
    p = problem(MAX_3S2)
    source = POOL.render(p, SM90, POOL.default_point(p, SM90), "maxp").source
    assert "Acc best = -INFINITY;" in source
    assert "if (value > best || isnan(value)) best = value;" in source
    assert "constexpr int kKernelH = 3, kKernelW = 3;" in source and "constexpr int kPadH = 1" in source
    assert "constexpr int kOutD = 1, kOutH = 56, kOutW = 56;" in source


def test_avg_pool_divides_by_the_full_window():
    p = problem("y = avg_pool2d(x, kernel_size=3, stride=1, padding=1); x: f16[8, 128, 56, 56]")
    source = POOL.render(p, SM90, POOL.default_point(p, SM90), "avgp").source
    assert "best / Acc(kKernelD * kKernelH * kKernelW)" in source
    assert "count_include_pad" in source.splitlines()[0]
    assert "using Acc = float;" in source and "__float2half_rn(" in source


def test_3d_and_optioned_pools_go_to_the_direct_sketch():
    for text in ("y = max_pool3d(x, kernel_size=3, stride=2, padding=1, dilation=3); "
                 "x: f32[16, 32, 128, 128, 128]",
                 "y = avg_pool2d(x, kernel_size=3, stride=2, padding=1, ceil_mode=True, "
                 "count_include_pad=False); x: f32[2, 3, 10, 10]"):
        assert [s.name for s, _ in serving(pool.SKETCHES, text)] == ["pool.direct"], text
    p = problem("y = avg_pool3d(x, kernel_size=2, padding=1, count_include_pad=False); x: f32[1, 2, 5, 6, 7]")
    source = POOL.render(p, SM90, POOL.default_point(p, SM90), "avg3").source
    assert "(min(min(w0 + kKernelW, kInW + kPadW), kInW) - max(w0, 0))" in source
    assert "constexpr int kKernelD = 2, kStrideD = 2, kPadD = 1, kDilD = 1;" in source
    assert POOL.unsupported(problem("y = max_pool3d(x, kernel_size=2); x: f32[3, 8, 8, 8]"), SM90)


def test_integer_input_is_refused():
    integer = problem("y = max_pool2d(x, kernel_size=2); x: i32[1, 2, 8, 8]")
    assert "floating types only" in POOL.unsupported(integer, SM90)


def test_defaults_fit_the_output_width():
    assert POOL.default_point(problem(MAX_3S2), SM90) == {"block_x": 64, "block_y": 4, "outputs": 1,
                                                          "layout": "direct"}
    small = problem("y = relu(avg_pool2d(x, kernel_size=7)); x: f32[64, 512, 7, 7]")
    assert POOL.default_point(small, SM90) == {"block_x": 32, "block_y": 8, "outputs": 1,
                                               "layout": "separable"}   # 7 x 7 windows, stride 7


def test_wide_strided_windows_are_read_separably():
    # KernelBench 45: 11 x 11 windows 11 apart; a warp's direct loads would be 44 bytes apart
    p = problem("y = avg_pool2d(x, kernel_size=11); x: f32[16, 64, 2048, 2048]")
    point = POOL.default_point(p, SM90)
    assert point["layout"] == "separable"
    source = POOL.render(p, SM90, point, "wide").source
    assert "const int in_col = c0 + s * 32 + lane;" in source and "__syncwarp();" in source
    assert "constexpr int kSpan = 31 * kStrideW + (kKernelW - 1) * kDilW + 1;" in source
    huge = problem("y = max_pool2d(x, kernel_size=64, stride=64); x: f32[1, 1, 4096, 4096]")
    assert any("input span" in v for v in POOL.space(huge, SM90).violations(
        {"block_x": 128, "block_y": 8, "outputs": 1, "layout": "separable"}))
    assert POOL.default_point(huge, SM90)["layout"] == "direct"


def test_constraints_reject_illegal_points():
    space = POOL.space(problem(MAX_3S2), SM90)
    too_few = {"block_x": 32, "block_y": 1, "outputs": 1, "layout": "direct"}
    assert any("threads per block" in v for v in space.violations(too_few))
    assert any("not one of" in v for v in space.violations({"block_x": 32, "block_y": 8, "outputs": 3,
                                                            "layout": "direct"}))
    with pytest.raises(ValueError, match="illegal point"):
        POOL.render(problem(MAX_3S2), SM90, too_few, "bad")


def test_symbolic_batch_is_a_parameter_and_planes_loop_past_the_grid_limit():
    p = problem("y = max_pool2d(x, kernel_size=3, stride=2, padding=1); x: f32[N, 64, 56, 56]; N=7")
    rendered = POOL.render(p, SM90, POOL.default_point(p, SM90), "symp")
    assert rendered.params[-1].name == "N" and rendered.params[-1].role == "symbol"
    assert "slice += gridDim.z" in rendered.source and "slices < 65535 ? slices : 65535" in rendered.launcher


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_sample_defaults_compile_without_spills(arch):
    rendered = [sketch.render(p, ARCHS[arch], sketch.default_point(p, ARCHS[arch]), f"sample{i}")
                for i, text in enumerate(pool.SAMPLE_INTENTS)
                for sketch, p in serving(pool.SKETCHES, text, arch)]
    assert len(rendered) == len(pool.SAMPLE_INTENTS)
    compile_clean(rendered, arch)


@needs_nvcc
def test_design_space_points_compile_without_spills():
    texts = [MAX_3S2, "y = relu(avg_pool2d(x, kernel_size=2)); x: bf16[4, 96, 55, 55]"]
    rendered = [sketch.render(p, SM90, pt, f"pt{i}_{k}")
                for i, text in enumerate(texts)
                for sketch, p in serving(pool.SKETCHES, text)
                for k, pt in enumerate(some_points(sketch, p, "sm_90"))]
    compile_clean(rendered, "sm_90")


@needs_emulator
@pytest.mark.parametrize("text, point", [
    ("y = max_pool2d(x, kernel_size=3, stride=2, padding=1); x: f32[N, 3, 13, 11]; N=2",
     {"block_x": 32, "block_y": 4, "outputs": 4, "layout": "direct"}),
    ("y = relu(avg_pool2d(x, kernel_size=3, stride=1, padding=1)); x: f16[2, 3, 9, 10]", None),
    ("y = avg_pool2d(x, kernel_size=2); x: bf16[1, 2, 7, 9]",
     {"block_x": 64, "block_y": 1, "outputs": 2, "layout": "direct"}),
    # 3-D pools, dilation, ceil_mode and count_include_pad=False (the divisor clipped per axis)
    ("y = max_pool3d(x, kernel_size=3, stride=2, padding=1, dilation=3); x: f32[2, 2, 11, 12, 13]",
     {"block_x": 32, "block_y": 2, "outputs": 1, "layout": "direct"}),
    ("y = avg_pool3d(x, kernel_size=3, stride=2, padding=1); x: f32[2, 3, 7, 8, 9]", None),
    ("y = avg_pool3d(x, kernel_size=2, stride=2, padding=1, ceil_mode=True, count_include_pad=False); "
     "x: f32[1, 2, 5, 6, 7]", None),
    ("y = avg_pool2d(x, kernel_size=3, stride=2, padding=1, ceil_mode=True); x: f32[2, 3, 10, 10]", None),
    ("y = max_pool2d(x, kernel_size=2, stride=2, dilation=2, ceil_mode=True); x: f32[1, 2, 9, 11]", None),
    # the separable layout: a warp's input columns read contiguously, folded over rows then columns
    ("y = avg_pool2d(x, kernel_size=5); x: f32[2, 3, 12, 77]",
     {"block_x": 32, "block_y": 2, "outputs": 1, "layout": "separable"}),
    ("y = max_pool2d(x, kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True); "
     "x: f32[N, 2, 13, 150]; N=2", {"block_x": 32, "block_y": 4, "outputs": 1, "layout": "separable"}),
    ("y = relu(avg_pool3d(x, kernel_size=3, stride=2, padding=1, count_include_pad=False)); "
     "x: f16[1, 2, 5, 6, 70]", {"block_x": 64, "block_y": 1, "outputs": 1, "layout": "separable"}),
], ids=["max-padded-symbol", "avg-fused-half", "avg-bf16-tail", "max3d-dilated", "avg3d-padded",
        "avg3d-ceil-exclude-pad", "avg-ceil-include-pad", "max-dilated-ceil", "separable-avg",
        "separable-max-dilated-ceil", "separable-avg3d-fused-half"])
def test_kernels_compute_the_reference_on_the_cpu_emulator(text, point, tmp_path):
    p = problem(text)
    assert_matches_reference(POOL, p, point or POOL.default_point(p, SM90), tmp_path)
