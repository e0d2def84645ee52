"""norm.rows: renders compile cleanly, strategies are what they claim, eps defaults, constraints."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from dice_engine.arch import ARCHS
from dice_engine.sketches import norm
from dice_engine.sketches.norm import _welford_code

from memory_bound_checks import ARCH_NAMES, compile_clean, needs_nvcc, problem, render_all

SKETCH = norm.SKETCHES[0]
SM90 = ARCHS["sm_90"]
CORNER_INTENTS = [
    "y = layer_norm(x, [1000], weight=w, bias=b); x: f16[N, 1000]; w: f16[1000]; b: f16[1000]",
    "y = rms_norm(x, [777]); x: f32[33, 777]",
    "y = rms_norm(x, [4096], weight=w); x: bf16[M, 4096]; w: bf16[4096]",
]


@needs_nvcc
@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_sample_defaults_compile_clean(arch):
    compile_clean(render_all(norm.SKETCHES, norm.SAMPLE_INTENTS, arch, corners=False), arch)


@needs_nvcc
@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_corners_and_samples_compile_clean(arch):
    compile_clean(render_all(norm.SKETCHES, CORNER_INTENTS, arch, corners=True), arch)


def test_layer_norm_in_registers_is_two_pass_with_packed_affine():
    p = problem("y = layer_norm(x, [1024], weight=w, bias=b); x: f32[4096, 1024]; w: f32[1024]; b: f32[1024]")
    point = SKETCH.default_point(p, SM90)
    assert point["cache"] == "registers" and point["vec"] == 4
    rendered = SKETCH.render(p, SM90, point, "ln")
    src = rendered.source
    assert "vals[kPacks][kVec]" in src and "const float mean = total / (float)row_len;" in src
    assert "squares += d * d" in src                     # variance from the centred registers
    assert "load_pack<float, kVec>(w, (col0) / kVec)" in src and "load_pack<float, kVec>(b," in src
    assert "kEps = 1e-05f" in src
    assert "reinterpret_cast<uintptr_t>(w) % 16 == 0" in rendered.launcher


def test_block_wide_rows_are_cached_in_shared_memory():
    p = problem("y = layer_norm(x, [16384], weight=w, bias=b); x: f32[16384, 16384]; w: f32[16384]; "
                "b: f32[16384]")
    point = SKETCH.default_point(p, SM90)
    assert point == {"group": 512, "threads": 512, "vec": 4, "cache": "shared", "unroll": 2}
    rendered = SKETCH.render(p, SM90, point, "lns")
    assert "extern __shared__" in rendered.source
    assert "store_pack<float, kVec>(row_cache, pack - first_pack, cached)" in rendered.source
    assert "load_pack<float, kVec>(row_cache, pack - first_pack)" in rendered.source
    assert "cudaFuncAttributeMaxDynamicSharedMemorySize" in rendered.launcher    # 64 KiB > 48 KiB
    assert rendered.launches[0].smem_bytes >= 65536


def test_a_row_cache_of_exactly_48_kib_with_block_partials_opts_in():
    """12288 floats fill the default 48 KiB of dynamic shared memory; the block's warp partials
    (static) take it past the limit together, where the launch needs the opt-in (measured on an
    H100 without it: "invalid argument" at launch)."""
    p = problem("y = layer_norm(x, [12288], w, b); x: f32[1024, 12288]; w: f32[12288]; b: f32[12288]")
    point = {"group": 512, "threads": 512, "vec": 4, "cache": "shared", "unroll": 2}
    rendered = SKETCH.render(p, SM90, point, "ln48")
    assert "const size_t smem_bytes = 49152;" in rendered.launcher
    assert "cudaFuncAttributeMaxDynamicSharedMemorySize" in rendered.launcher
    assert rendered.launches[0].smem_bytes > 49152


@needs_nvcc
def test_shared_memory_caches_compile_clean():
    rendered = []
    for i, text in enumerate(CORNER_INTENTS[:2] + ["y = layer_norm(x, [16384]); x: bf16[64, 16384]"]):
        p = problem(text)
        base = {"vec": SKETCH.default_point(p, SM90)["vec"], "cache": "shared"}
        for j, (group, threads, unroll) in enumerate([(4, 64, 1), (32, 256, 4), (512, 512, 2)]):
            point = dict(base, group=group, threads=threads, unroll=unroll)
            if SKETCH.space(p, SM90).is_legal(point):
                rendered.append(SKETCH.render(p, SM90, point, f"cache{i}_{j}"))
    assert len(rendered) >= 6
    compile_clean(rendered, "sm_90")


def test_rms_norm_default_eps_is_the_dtype_epsilon():
    f32 = SKETCH.render(*_default("y = rms_norm(x); x: f32[64, 512]"), "r32").source
    bf16 = SKETCH.render(*_default("y = rms_norm(x); x: bf16[64, 512]"), "r16").source
    assert "kEps = 1.1920928955078125e-07f" in f32
    assert "kEps = 0.0078125f" in bf16
    assert "rsqrtf(squares / (float)row_len + kEps)" in f32


def test_long_or_unknown_rows_stream_with_welford():
    p = problem("y = layer_norm(x, [65536]); x: f32[64, 65536]")
    point = SKETCH.default_point(p, SM90)
    assert point["cache"] == "none"
    src = SKETCH.render(p, SM90, point, "lnw").source
    assert "welford_add_pack(stats, cached.v)" in src and "MergeWelford" in src and "Pass 2" in src
    rms = SKETCH.render(*_default("y = rms_norm(x); x: f32[M, K]"), "rmsw").source
    assert "squares += val * val;" in rms and "Welford" not in rms


def test_constraints_and_unsupported_forms():
    space = SKETCH.space(problem("y = rms_norm(x); x: f32[M, K]"), SM90)
    point = {"group": 32, "threads": 256, "vec": 4, "cache": "registers", "unroll": 1}
    assert any("known when generating" in why for why in space.violations(point))
    assert any("known when generating" in why for why in space.violations(dict(point, cache="shared")))
    wide = SKETCH.space(problem("y = rms_norm(x); x: f32[8, 65536]"), SM90)
    assert any("row cache exceed" in why for why in wide.violations(dict(point, cache="shared")))
    odd = SKETCH.space(problem("y = rms_norm(x, [777]); x: f32[33, 777]"), SM90)
    assert any("multiple of vec" in why for why in odd.violations(dict(point, vec=4)))
    scaled = problem("y = layer_norm(x, [8], weight=w * 2.0); x: f32[4, 8]; w: f32[8]")
    assert "input tensors" in SKETCH.unsupported(scaled, SM90)


def _default(text: str):
    p = problem(text)
    return p, SM90, SKETCH.default_point(p, SM90)


WELFORD_HARNESS = r"""
#include <cmath>
#include <cstdio>
#define __device__
#define __forceinline__ inline
constexpr int kVec = 4;
%(code)s
int main() {
    // 22 values far from zero (cancellation-prone): thread 0 takes packs of 4, thread 1 two
    // packs and two single tail elements; then the two partial states merge.
    float v[22];
    for (int i = 0; i < 22; ++i) v[i] = 10000.0f + 0.25f * (float)((i * 7) %% 11);
    Welford a = {0, 0, 0}, b = {0, 0, 0};
    for (int p = 0; p < 3; ++p) welford_add_pack(a, *reinterpret_cast<const float(*)[4]>(v + 4 * p));
    for (int p = 3; p < 5; ++p) welford_add_pack(b, *reinterpret_cast<const float(*)[4]>(v + 4 * p));
    welford_add(b, v[20]);
    welford_add(b, v[21]);
    const Welford s = MergeWelford()(a, b);
    double mean = 0, m2 = 0;
    for (float x : v) mean += x;
    mean /= 22;
    for (float x : v) m2 += (x - mean) * (x - mean);
    std::printf("%%.9g %%.9g %%.9g %%.9g %%.9g", s.count, s.mean, mean, s.m2, m2);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
def test_welford_packs_and_merges_match_two_pass(tmp_path):
    source = tmp_path / "welford.cpp"
    source.write_text(WELFORD_HARNESS % {"code": _welford_code("float")})
    subprocess.run(["g++", "-std=c++17", "-o", str(tmp_path / "welford"), str(source)], check=True,
                   capture_output=True)
    count, mean, want_mean, m2, want_m2 = map(float, subprocess.run(
        [str(tmp_path / "welford")], capture_output=True, text=True, check=True).stdout.split())
    assert count == 22
    assert mean == pytest.approx(want_mean, rel=1e-7)
    assert m2 == pytest.approx(want_m2, rel=1e-4)


def test_few_long_rows_split_over_blocks():
    split = norm.SKETCHES[1]
    p = problem("y = layer_norm(x, [65536], weight=w); x: f32[64, 65536]; w: f32[65536]")
    point = split.default_point(p, SM90)
    assert point["chunks"] >= 8 and point["vec"] == 4
    rendered = split.render(p, SM90, point, "split")
    assert len(rendered.kernel_names) == 2 and "atomic" not in rendered.source
    assert "MergeWelford()(stats, partials[row * kChunks + part])" in rendered.source
    assert "load_pack<float, kVec>(w, (pack * kVec - row_start) / kVec)" in rendered.source
    rms_problem = problem("y = rms_norm(x); x: bf16[4, N]")
    rms = split.render(rms_problem, SM90, split.default_point(rms_problem, SM90), "r")
    assert "SumOp()(stats, partials[row * kChunks + part])" in rms.source
