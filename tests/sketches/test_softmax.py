"""Softmax sketches: renders compile cleanly, strategies are what they claim, constraints."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from dice_engine.arch import ARCHS
from dice_engine.sketches import softmax
from dice_engine.sketches.softmax import _online_code

from memory_bound_checks import ARCH_NAMES, compile_clean, needs_nvcc, problem, render_all

ROWS, COLUMNS, SPLIT = softmax.SKETCHES
SM90 = ARCHS["sm_90"]
CORNER_INTENTS = [
    "y = softmax(x, dim=-1); x: f16[N, 1000]",
    "y = log_softmax(x * 0.5, dim=1); x: f32[33, 4099]",
    "y = softmax(x, dim=1); x: bf16[6, 40, 24]",
]


@needs_nvcc
@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_sample_defaults_compile_clean(arch):
    compile_clean(render_all(softmax.SKETCHES, softmax.SAMPLE_INTENTS, arch, corners=False), arch)


@needs_nvcc
@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_corners_and_samples_compile_clean(arch):
    compile_clean(render_all(softmax.SKETCHES, CORNER_INTENTS, arch, corners=True), arch)


def test_rows_that_fit_are_cached_in_registers():
    p = problem("y = softmax(x, dim=1); x: f32[4096, 1024]")
    point = ROWS.default_point(p, SM90)
    assert point["cache"] == "registers" and point["vec"] == 4
    src = ROWS.render(p, SM90, point, "sm").source
    assert "vals[kPacks][kVec]" in src and "load_pack<float, kVec>(x, pack)" in src
    assert "store_pack<float, kVec>(y," in src
    assert "expf(vals[reg_pack][elem] - row_max)" in src and "online_add" not in src


def test_unknown_or_huge_rows_stream_with_an_online_pass():
    for text in ("y = softmax(x, dim=1); x: f32[B, K]", "y = softmax(x, dim=1); x: f32[64, 262144]"):
        p = problem(text)
        point = ROWS.default_point(p, SM90)
        assert point["cache"] == "none", text
        src = ROWS.render(p, SM90, point, "sm").source
        assert "online_add(stats, val)" in src and "Pass 2" in src and "MergeMaxSum" in src


def test_log_softmax_subtracts_the_log_of_the_sum():
    p = problem("y = log_softmax(x, dim=1); x: bf16[333, 4099]")
    point = ROWS.default_point(p, SM90)
    assert point["vec"] == 1                       # 4099 is odd: no packs
    src = ROWS.render(p, SM90, point, "lsm").source
    assert "logf(row_sum)" in src and "vals[reg_pack][elem] - log_sum" in src
    assert "__float2bfloat16_rn" in src


def test_non_innermost_axis_uses_columns():
    p = problem("y = softmax(x, dim=0); x: f32[1000, 512]")
    assert ROWS.unsupported(p, SM90) and COLUMNS.unsupported(p, SM90) is None
    src = COLUMNS.render(p, SM90, COLUMNS.default_point(p, SM90), "col").source
    assert "column_stats[kSplit][kVec * kTile + 0]" in src and "MergeMaxSum" in src


def test_constraints_reject_illegal_points():
    symbolic = ROWS.space(problem("y = softmax(x, dim=1); x: f32[B, K]"), SM90)
    point = {"group": 32, "threads": 256, "vec": 4, "cache": "registers", "unroll": 1}
    assert any("known when generating" in why for why in symbolic.violations(point))
    fixed = ROWS.space(problem("y = softmax(x, dim=1); x: f32[64, 1024]"), SM90)
    assert fixed.is_legal(point)
    assert any("unroll only applies" in why for why in fixed.violations(dict(point, unroll=2)))
    huge = ROWS.space(problem("y = softmax(x, dim=1); x: f32[64, 262144]"), SM90)
    assert any("registers" in why for why in huge.violations(dict(point, group=1024, threads=1024)))


@needs_nvcc
def test_shared_memory_caches_compile_clean():
    rendered = []
    for i, text in enumerate(CORNER_INTENTS[:2] + ["y = softmax(x, dim=1); x: f32[64, 16384]"]):
        p = problem(text)
        base = {"vec": ROWS.default_point(p, SM90)["vec"], "cache": "shared"}
        for j, (group, threads, unroll) in enumerate([(4, 64, 1), (32, 256, 4), (512, 512, 2)]):
            point = dict(base, group=group, threads=threads, unroll=unroll)
            if ROWS.space(p, SM90).is_legal(point):
                rendered.append(ROWS.render(p, SM90, point, f"cache{i}_{j}"))
    assert len(rendered) >= 5
    src = rendered[-1].source
    assert "store_pack<float, kVec>(row_cache, pack - first_pack, cached)" in src
    assert "read the shared-memory row cache" in src
    compile_clean(rendered, "sm_90")


ONLINE_HARNESS = r"""
#include <cmath>
#include <cstdio>
#define __device__
#define __forceinline__ inline
%(code)s
int main() {
    // A row split over three threads as the kernels do (strided), each thread's running
    // MaxSum merged in a fixed order; -inf entries and an all -inf thread add nothing.
    const float row[12] = {1.5f, -INFINITY, 3.0f, -INFINITY, 0.25f, -INFINITY,
                           -2.0f, -INFINITY, 7.0f, -INFINITY, 3.0f, -1.0f};
    MaxSum part[4] = {{-INFINITY, 0}, {-INFINITY, 0}, {-INFINITY, 0}, {-INFINITY, 0}};
    for (int i = 0; i < 12; ++i) online_add(part[i %% 4], row[i]);
    MaxSum total = MergeMaxSum()(MergeMaxSum()(part[0], part[1]), MergeMaxSum()(part[2], part[3]));
    double expect = 0;
    for (float v : row) expect += std::exp((double)v - 7.0);
    std::printf("%%.9g %%.9g %%.9g", total.max, total.sum, expect);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
def test_online_max_sum_matches_a_direct_pass(tmp_path):
    source = tmp_path / "online.cpp"
    source.write_text(ONLINE_HARNESS % {"code": _online_code("float")})
    subprocess.run(["g++", "-std=c++17", "-o", str(tmp_path / "online"), str(source)], check=True,
                   capture_output=True)
    top, total, expect = map(float, subprocess.run([str(tmp_path / "online")], capture_output=True, text=True,
                                                   check=True).stdout.split())
    assert top == 7.0
    assert total == pytest.approx(expect, rel=1e-6)


def test_few_long_rows_split_over_blocks():
    split = SPLIT
    p = problem("y = softmax(x, dim=1); x: f32[64, 262144]")
    point = split.default_point(p, SM90)
    assert point["chunks"] >= 16 and point["vec"] == 4
    rendered = split.render(p, SM90, point, "split")
    assert len(rendered.kernel_names) == 2 and "atomic" not in rendered.source
    assert "MergeMaxSum()(stats, partials[row * kChunks + part])" in rendered.source
    assert "workspace(rows * kn::kChunks)" in rendered.launcher
    assert split.unsupported(problem("y = softmax(x, dim=0); x: f32[64, 8]"), SM90)
