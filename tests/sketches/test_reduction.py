"""Reduction sketches: renders compile cleanly, strategies are what they claim, the combine
functors have torch's semantics, constraints and unsupported forms are reported."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from dice_engine.arch import ARCHS
from dice_engine.ir.dtypes import F32, I32
from dice_engine.sketches import reduction
from dice_engine.sketches.access import axis_view
from dice_engine.sketches.reduction import reducer

from memory_bound_checks import ARCH_NAMES, compile_clean, needs_nvcc, problem, render_all

ROWS, COLUMNS, SPLIT = reduction.SKETCHES
SM90 = ARCHS["sm_90"]
CORNER_INTENTS = [
    "s = sum(x * x, dim=1); x: f32[N, 1000]",
    "i = argmax(x, dim=-1); x: bf16[33, 77]",
    "s = max(x, dim=1, keepdim=True); x: f16[6, 40, 24]",
]


@needs_nvcc
@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_sample_defaults_compile_clean(arch):
    compile_clean(render_all(reduction.SKETCHES, reduction.SAMPLE_INTENTS, arch, corners=False), arch)


@needs_nvcc
@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_corners_and_samples_compile_clean(arch):
    compile_clean(render_all(reduction.SKETCHES, CORNER_INTENTS, arch, corners=True), arch)


def test_each_axis_form_has_its_sketches():
    rows = problem("s = sum(x, dim=1); x: f32[64, 128]")
    cols = problem("s = sum(x, dim=0); x: f32[64, 128]")
    assert [s.name for s in reduction.SKETCHES if s.unsupported(rows, SM90) is None] == \
        ["reduction.rows", "reduction.split_rows"]
    assert [s.name for s in reduction.SKETCHES if s.unsupported(cols, SM90) is None] == ["reduction.columns"]


def test_unsupported_forms_say_why():
    gap = problem("s = sum(x, dim=(0, 2)); x: f32[4, 5, 6]")
    assert "not adjacent" in ROWS.unsupported(gap, SM90)
    normalize = problem("y = x - mean(x, dim=1, keepdim=True); x: f32[8, 16]")
    assert "broadcasts the reduced result back" in ROWS.unsupported(normalize, SM90)


def test_axis_view_of_contiguous_runs():
    view = axis_view((2, 3, 4, 5), [1, 2])
    assert (view.outer_int, view.reduced_int, view.inner_int) == (2, 12, 5)
    assert axis_view((2, "N", 4), [1]).reduced == "N"
    assert axis_view((2, 3), []).reduced_int == 1
    assert axis_view((2, 3, 4), [0, 2]) is None


def test_row_render_is_vectorized_and_fuses_prologue_and_epilogue():
    p = problem("s = sqrt(mean(x * x, dim=-1)); x: f16[4096, 4096]")
    point = ROWS.default_point(p, SM90)
    assert point["vec"] == 8 and point["unroll"] >= 2
    src = ROWS.render(p, SM90, point, "rms").source
    assert "load_pack<__half, kVec>(x, pack)" in src
    assert "__half2float(x_pack[slot].v[elem]) * __half2float(x_pack[slot].v[elem])" in src
    assert "sqrtf((acc / (float)row_len))" in src   # the mean enters the epilogue as one operand
    assert "group_reduce<kGroup>" in src and "atomic" not in src


def test_long_rows_get_a_block_and_short_rows_a_few_lanes():
    long_rows = ROWS.default_point(problem("s = sum(x, dim=1); x: f32[16384, 16384]"), SM90)
    short_rows = ROWS.default_point(problem("s = sum(x, dim=1); x: f32[1000000, 16]"), SM90)
    assert long_rows["group"] >= 128 and long_rows["vec"] == 4
    assert short_rows["group"] <= 8


def test_two_stage_renders_are_deterministic_merges():
    full = problem("s = sum(x); x: f32[67108864]")
    point = SPLIT.default_point(full, SM90)
    assert point["chunks"] >= 512                  # the whole GPU on one row
    rendered = SPLIT.render(full, SM90, point, "full")
    assert len(rendered.kernel_names) == 2 and len(rendered.launches) == 2
    assert "cudaMalloc" in rendered.source and "atomic" not in rendered.source
    assert "in a fixed order" in rendered.source

    cols = problem("s = sum(x, dim=0); x: f32[16384, 16384]")
    point = COLUMNS.default_point(cols, SM90)
    assert point["vec"] == 4 and point["chunks"] > 1
    rendered = COLUMNS.render(cols, SM90, point, "cols")
    assert "merge_kernel" in rendered.source and "workspace(" in rendered.launcher
    single = COLUMNS.render(cols, SM90, dict(point, chunks=1), "cols1")
    assert "merge_kernel" not in single.source and len(single.launches) == 1


def test_constraints_reject_illegal_points():
    p = problem("s = sum(x, dim=1); x: f32[64, 777]")
    space = ROWS.space(p, SM90)
    assert any("multiple of vec" in why for why in space.violations({"group": 32, "threads": 256, "vec": 4,
                                                                       "unroll": 1}))
    assert any("does not divide" in why for why in space.violations({"group": 512, "threads": 256, "vec": 1,
                                                                        "unroll": 1}))
    arg = problem("i = argmax(x, dim=0); x: f32[64, 4096]")
    space = COLUMNS.space(arg, SM90)
    wide = {"tile": 256, "split": 4, "vec": 4, "unroll": 1, "chunks": 1}
    assert any("shared memory" in why for why in space.violations(wide))


HOST_HARNESS = r"""
#include <cstdio>
#include <cmath>
#include <cstdint>
#define __device__
#define __forceinline__ inline
%(code)s
int main() {
    const float nan = NAN;
    const float values[][4] = {{1, 3, 3, 2}, {5, nan, 7, nan}, {-INFINITY, -INFINITY, -1, -1}};
    for (const auto& row : values) {
        ArgPair acc = %(identity)s;
        for (int i = 3; i >= 0; --i) acc = Combine()(acc, ArgPair{row[i], i});   // any order
        std::printf("%%lld ", acc.index);
    }
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
@pytest.mark.parametrize("op, expected", [("argmax", "1 1 2"), ("argmin", "0 1 0")])
def test_arg_combine_keeps_torch_ties_and_nans(tmp_path, op, expected):
    r = reducer(op, F32)
    source = tmp_path / "combine.cpp"
    source.write_text(HOST_HARNESS % {"code": r.device_code, "identity": r.identity})
    binary = tmp_path / "combine"
    subprocess.run(["g++", "-std=c++17", "-o", str(binary), str(source)], check=True, capture_output=True)
    assert subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.split() == \
        expected.split()


def test_reducer_types_follow_torch():
    assert reducer("sum", I32).acc_type == "long long"
    assert reducer("max", I32).identity == "INT32_MIN"
    assert reducer("mean", F32).value_type == "float"
    assert reducer("argmin", F32).acc_type == "ArgPair"


def test_long_float_sums_and_means_accumulate_compensated_partials():
    for text in ("s = sum(x); x: f32[67108864]", "s = mean(x, dim=0); x: bf16[65536, 8]",
                 "s = sum(x * x, dim=1); x: f32[4, 1048576]"):
        p = problem(text)
        for sketch in reduction.SKETCHES:
            if sketch.unsupported(p, SM90) is None:
                source = sketch.render(p, SM90, sketch.default_point(p, SM90), "long_sum").source
                assert "struct Compensated" in source and "two_sum(" in source, (sketch.name, text)
    # short sums, integer sums, and max keep the plain accumulator
    for text in ("s = sum(x, dim=1); x: f32[16384, 16384]", "s = sum(x); x: i32[1048576]",
                 "s = max(x); x: f32[1048576]"):
        p = problem(text)
        assert all("Compensated" not in s.render(p, SM90, s.default_point(p, SM90), "plain").source
                   for s in reduction.SKETCHES if s.unsupported(p, SM90) is None), text
