"""Stride-1 convolutions by Winograd (`conv.winograd`, `conv.winograd_nd`): the transforms
exactly (rationals), their f32 rounding against a float64 truth, which problems the sketch takes
and why it refuses the others, emulated results against the float64 reference (every tile size,
several passes with a short last one, bias, epilogue, transposed and 1-D forms) and clean nvcc
builds."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from cpu_emulation import assert_matches_reference, needs_emulator, random_inputs
from layout_sketch_checks import compile_clean, needs_nvcc, private_compile_cache, problem
from test_gemm_emulated import Emulated

from dice_engine.arch import ARCHS
from dice_engine.runner.build import launcher_symbol
from dice_engine.sketches import conv_winograd, registry
from dice_engine.sketches.conv_winograd import WinogradConv, WinogradConvNd
from dice_engine.sketches.winograd_transforms import MAX_POINTS, apply_code, transform

__all__ = ["private_compile_cache"]
SM90 = ARCHS["sm_90"]
FORMS = [(m, r) for m in range(1, 8) for r in range(1, 8) if m + r - 1 <= MAX_POINTS]


@pytest.mark.parametrize("m, r", FORMS)
def test_every_transform_computes_the_correlation_exactly(m, r):
    t = transform(m, r)
    a = m + r - 1
    rng = np.random.default_rng(m * 10 + r)
    for _ in range(3):
        d = [Fraction(int(v), int(q)) for v, q in zip(rng.integers(-50, 50, a), rng.integers(1, 9, a))]
        g = [Fraction(int(v), int(q)) for v, q in zip(rng.integers(-50, 50, r), rng.integers(1, 9, r))]
        gg = [sum(t.g[i][k] * g[k] for k in range(r)) for i in range(a)]
        bd = [sum(t.bt[i][j] * d[j] for j in range(a)) for i in range(a)]
        y = [sum(t.at[i][j] * gg[j] * bd[j] for j in range(a)) for i in range(m)]
        assert y == [sum(g[k] * d[i + k] for k in range(r)) for i in range(m)]
    # the input transform is in small integers (cheap, exact in f32)
    assert all(v.denominator == 1 and abs(v) <= 32 for row in t.bt for v in row)


def test_transforms_beyond_the_points_are_refused():
    with pytest.raises(ValueError, match="points"):
        transform(4, 6)


def test_emitted_code_leaves_out_zeros_and_unit_factors():
    lines = apply_code(transform(2, 3).bt, "d[{j}]", "v[{i}]")
    assert lines == ["v[0] = d[0] - d[2];", "v[1] = d[1] + d[2];", "v[2] = -d[1] + d[2];",
                     "v[3] = -d[1] + d[3];"]


def _f64(matrix) -> np.ndarray:
    return np.array([[float(v) for v in row] for row in matrix])


@pytest.mark.parametrize("tile, r, s, bound", [(2, 3, 3, 3e-6), (4, 3, 3, 4e-5), (4, 3, 5, 4e-5),
                                               (4, 5, 5, 4e-5), (2, 7, 7, 4e-5)])
def test_f32_rounding_stays_below_the_tolerance(tile, r, s, bound):
    """2,000 tiles of 64 channels of standard normal data in f32 (transforms, products and channel
    sums all rounded to f32) against the float64 direct sum: the largest error relative to the
    outputs' scale (rms) is within `bound` (the checks allow 1e-4 of it)."""
    th, tw = transform(tile, r), transform(tile, s)
    rng = np.random.default_rng(7)
    d = rng.standard_normal((2000, 64, tile + r - 1, tile + s - 1))
    g = rng.standard_normal((64, r, s))
    windows = np.lib.stride_tricks.sliding_window_view(d, (r, s), axis=(2, 3))
    truth = np.einsum("tcijrs,crs->tij", windows, g)
    u = np.einsum("ar,crs,bs->cab", _f64(th.g), g.astype(np.float32), _f64(tw.g)).astype(np.float32)
    v = np.einsum("ai,tcij,bj->tcab", _f64(th.bt), d.astype(np.float32), _f64(tw.bt)).astype(np.float32)
    products = (u[None] * v).sum(1, dtype=np.float32)
    y = np.einsum("ia,tab,jb->tij", _f64(th.at), products, _f64(tw.at)).astype(np.float32)
    worst = float(np.abs(y - truth).max() / np.sqrt(np.mean(truth**2)))
    assert worst < bound, worst


@pytest.mark.parametrize("text, sketch", [
    ("y = conv2d(x, w, padding=1); x: f32[8, 64, 56, 56]; w: f32[64, 64, 3, 3]", WinogradConv),
    ("y = conv_transpose2d(x, w); x: f32[4, 16, 32, 64]; w: f32[16, 32, 3, 5]", WinogradConvNd),
    ("y = conv1d(x, w, padding=3); x: f32[4, 8, 100]; w: f32[16, 8, 7]", WinogradConvNd),
    ("y = conv2d(x, w); x: f32[2, 4, 20, 20]; w: f32[8, 4, 1, 3]", WinogradConv),
])
def test_stride_one_f32_convolutions_have_the_winograd_path_beside_the_others(text, sketch):
    p = problem(text)
    names = [s.name for s in registry.candidates(p, SM90)]
    assert sketch.name in names and len(names) >= 3   # beside an implicit GEMM and the general lowering


@pytest.mark.parametrize("text, why", [
    ("y = conv2d(x, w, stride=2, padding=1); x: f32[2, 4, 16, 16]; w: f32[8, 4, 3, 3]", "stride 1"),
    ("y = conv2d(x, w, padding=2, dilation=2); x: f32[2, 4, 16, 16]; w: f32[8, 4, 3, 3]", "dilation 1"),
    ("y = conv2d(x, w, groups=2); x: f32[2, 4, 16, 16]; w: f32[8, 2, 3, 3]", "one group"),
    ("y = conv2d(x, w); x: f16[2, 4, 16, 16]; w: f16[8, 4, 3, 3]", "f32"),
    ("y = conv2d(x, w); x: f32[2, 4, 16, 16]; w: f32[8, 4, 1, 1]", "2..7 taps"),
    ("y = conv2d(x, w); x: f32[2, 4, 16, 16]; w: f32[8, 4, 9, 9]", "2..7 taps"),
    ("y = conv2d(x, w, padding=1); x: f32[N, 4, 16, 16]; w: f32[8, 4, 3, 3]", "literal batch"),
    ("y = conv3d(x, w); x: f32[2, 4, 8, 8, 8]; w: f32[8, 4, 3, 3, 3]", "1-D and 2-D"),
    ("y = conv_transpose2d(x, w, stride=2); x: f32[2, 4, 8, 8]; w: f32[4, 3, 3, 3]", "stride 1"),
])
def test_other_convolutions_are_refused_with_the_reason(text, why):
    reason = WinogradConvNd().unsupported(problem(text), SM90)
    assert reason is not None and why in reason, reason


def _inputs(p) -> dict[str, np.ndarray]:
    """Standard normal data with the weights at PyTorch's default scale (1 / sqrt(fan-in)): outputs
    of order one, as in a network, so the emulator's check (1e-4 of 1 + |truth|) measures the
    kernel and not the transforms' rounding of outputs in the tens."""
    inputs = random_inputs(p, {})
    weight = p.anchor.args[1].name
    w = inputs[weight]   # (out, in, taps...) or, transposed, (in, out, taps...)
    summed_channels = w.shape[0] if p.anchor.op.startswith("conv_transpose") else w.shape[1]
    inputs[weight] = (w / np.sqrt(summed_channels * w[0, 0].size)).astype(np.float32)
    return inputs


def _points(text: str) -> list[tuple[object, dict]]:
    p = problem(text)
    sketch = next(s for s in conv_winograd.SKETCHES if s.pattern == p.pattern)
    return [(p, point) for point in sketch.space(p, SM90).points() if point["chunk_mib"] == 64]


@needs_emulator
@pytest.mark.parametrize("text", conv_winograd.SAMPLE_INTENTS)
def test_every_tile_size_matches_the_reference_on_the_emulator(text, tmp_path):
    for i, (p, point) in enumerate(_points(text)):
        sketch = next(s for s in conv_winograd.SKETCHES if s.pattern == p.pattern)
        workdir = tmp_path / str(i)
        workdir.mkdir()
        assert_matches_reference(Emulated(sketch), p, point, workdir, inputs=_inputs(p))


@needs_emulator
def test_several_passes_with_a_short_last_one_match_the_reference(tmp_path, monkeypatch):
    """Chunks of 64 tiles (the unit shrunk so a small problem needs several): 4 x 9 x 9 = 324 tiles
    run as six passes, the last of 4 through a GEMM instance of its own."""
    monkeypatch.setattr(conv_winograd, "CHUNK_UNIT", 1 << 10)
    monkeypatch.setattr(conv_winograd, "CHUNK_TILE_MULTIPLE", 64)
    text = "y = relu(conv2d(x, w, b, padding=1)) * 2.0; x: f32[4, 6, 17, 18]; w: f32[5, 6, 3, 3]; b: f32[5]"
    p = problem(text)
    point = {"tile": 2, "chunk_mib": 64}
    rendered = WinogradConv().render(p, SM90, point, "passes")
    assert "6 pass(es) of 64 tiles" in rendered.source and "passes_gemm4_launch" in rendered.source
    assert_matches_reference(Emulated(WinogradConv()), p, point, tmp_path, inputs=_inputs(p))


def test_the_exported_launcher_is_the_convolution_not_the_embedded_gemm():
    """The runner calls the first `extern "C" ..._launch` of `launcher`: it must be the conv's,
    and the file exports nothing else (the embedded GEMMs' launchers are static)."""
    p = problem("y = conv2d(x, w, padding=1); x: f32[2, 8, 20, 20]; w: f32[8, 8, 3, 3]")
    rendered = WinogradConv().render(p, SM90, {"tile": 2, "chunk_mib": 64}, "conv")
    assert launcher_symbol(rendered) == "conv_launch"
    assert "conv_gemm" in rendered.source and "conv_gemm" not in rendered.launcher.split("{")[0]
    assert rendered.source.count('extern "C"') == 1
    assert "static void conv_gemm" in rendered.source


def test_the_cost_model_sees_the_winograd_work():
    p = problem("y = conv_transpose2d(x, w); x: f32[64, 64, 128, 256]; w: f32[64, 128, 3, 5]")
    sketch = WinogradConvNd()
    point = sketch.default_point(p, SM90)
    rendered = sketch.render(p, SM90, point, "kb69")
    assert point["tile"] == 4 and rendered.work is not None
    direct_flops = 2.0 * 64 * 128 * 130 * 260 * 64 * 15
    assert rendered.work.flops < direct_flops / 4   # F(4x4, 3x5): 48 products per 16 outputs, not 240
    assert rendered.launches[rendered.main_launch].kernel.endswith("_kernel")   # the GEMM paces it


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_sample_and_tile_compiles_without_warnings_or_spills(arch):
    rendered = []
    for text in conv_winograd.SAMPLE_INTENTS:
        for i, (p, point) in enumerate(_points(text)):
            sketch = next(s for s in conv_winograd.SKETCHES if s.pattern == p.pattern)
            rendered.append(sketch.render(p, ARCHS[arch], point, f"w{len(rendered)}_{i}"))
    compile_clean(rendered, arch)
