"""elementwise.fused: renders compile cleanly, packs are 128-bit, broadcast indexing is right."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from dice_engine.arch import ARCHS
from dice_engine.compile import compile_cuda
from dice_engine.sketches import elementwise
from dice_engine.sketches.access import broadcast_offset, plan_access
from dice_engine.ir import ops
from dice_engine.ir.dtypes import F32

from memory_bound_checks import (ARCH_NAMES, compile_clean, evaluate_c, needs_nvcc, problem,
                                  render_all)

SKETCH = elementwise.SKETCHES[0]
CORNER_INTENTS = [
    "y = relu(x) * 2.0; x: f32[N]",
    "y = x * s + c; x: f16[1000, 333]; s: f16[1000, 1]; c: f16[333]",
    "y = gelu(x + b); x: bf16[N, 1024]; b: bf16[1024]",
    "y = where(x > 0, x, 0.1 * x); x: f64[4097]",
]


@needs_nvcc
@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_sample_defaults_compile_clean(arch):
    compile_clean(render_all(elementwise.SKETCHES, elementwise.SAMPLE_INTENTS, arch, corners=False), arch)


@needs_nvcc
@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_corners_and_samples_compile_clean(arch):
    compile_clean(render_all(elementwise.SKETCHES, CORNER_INTENTS, arch, corners=True), arch)


@needs_nvcc
def test_vectorized_path_moves_128_bits_per_access():
    p = problem("y = x * s + c; x: f16[1000, 336]; s: f16[1000, 1]; c: f16[336]")
    point = SKETCH.default_point(p, ARCHS["sm_90"])
    assert point["vec"] == 8
    rendered = SKETCH.render(p, ARCHS["sm_90"], point, "vec_check")
    result = compile_cuda(rendered.source, "sm_90", output="ptx")
    assert result.ok, result.first_error()
    ptx = result.artifact.read_text()
    assert "ld.global.nc.v4" in ptx and "st.global.v4" in ptx


def test_default_point_is_legal_and_vectorized_where_it_can_be():
    for text in elementwise.SAMPLE_INTENTS:
        p = problem(text)
        for arch in ("sm_75", "sm_80", "sm_90"):
            point = SKETCH.default_point(p, ARCHS[arch])
            assert SKETCH.space(p, ARCHS[arch]).is_legal(point), (text, arch, point)
    big = problem("y = relu(x); x: f32[16384, 16384]")
    assert SKETCH.default_point(big, ARCHS["sm_90"]) == {"threads": 256, "vec": 4, "unroll": 2,
                                                          "schedule": "one_shot"}


def test_render_states_its_strategy():
    p = problem("y = relu(a) * 2.5 + b; a, b: f32[N]")
    vectorized = SKETCH.render(p, ARCHS["sm_90"], {"threads": 256, "vec": 4, "unroll": 2,
                                                  "schedule": "grid_stride"}, "ew")
    assert "16-byte packs (4 elements)" in vectorized.source
    assert "load_pack<float, kVec>(a, pack)" in vectorized.source
    assert "% 16) == 0" in vectorized.launcher          # alignment decides packs vs scalar loop
    assert "waves of resident blocks" in vectorized.launcher
    assert "idx < numel" in vectorized.source            # the scalar tail
    assert [p.name for p in vectorized.params] == ["a", "b", "y", "N"]
    scalar = SKETCH.render(p, ARCHS["sm_90"], {"threads": 128, "vec": 1, "unroll": 1,
                                              "schedule": "one_shot"}, "ew1")
    assert "scalar accesses" in scalar.source and "one-shot" in scalar.launcher


def test_register_budget_prunes_wide_unrolls():
    p = problem("y = a * b + c; a, b, c: f32[N]")
    space = SKETCH.space(p, ARCHS["sm_90"])
    bad = {"threads": 1024, "vec": 4, "unroll": 8, "schedule": "one_shot"}
    assert any("registers" in why for why in space.violations(bad))
    assert space.is_legal({"threads": 256, "vec": 4, "unroll": 2, "schedule": "one_shot"})


@pytest.mark.parametrize("in_shape, out_shape", [
    ((5, 1), (5, 6)), ((6,), (5, 6)), ((1, 4, 1), (3, 4, 5)), ((3, 1, 5), (3, 4, 5)),
    ((), (3, 4)), ((2, 1, 4, 1), (2, 3, 4, 5)), ((4, 5), (3, 4, 5)),
    # the linear-offset sketches' fused operands: per channel beside NCHW and NCDHW, per (channel, row)
    ((4, 1, 1), (2, 4, 3, 5)), ((6, 1, 1, 1), (2, 6, 2, 3, 2)), ((4, 3, 1), (2, 4, 3, 5)),
    ((1, 1, 1), (2, 4, 3, 5)),
])
def test_broadcast_offsets_match_numpy(in_shape, out_shape):
    expr = broadcast_offset(in_shape, out_shape, "i")
    source = np.arange(int(np.prod(in_shape))).reshape(in_shape)
    expected = np.broadcast_to(source, out_shape).reshape(-1)
    got = [evaluate_c(expr, {"i": i}) for i in range(expected.size)]
    assert got == expected.tolist(), expr


def test_broadcast_offsets_with_symbols():
    expr = broadcast_offset(("M", 1), ("M", "N"), "i")
    for m, n in itertools.product((1, 3), (2, 5)):
        got = [evaluate_c(expr, {"i": i, "M": m, "N": n}) for i in range(m * n)]
        assert got == [i // n for i in range(m * n)]


def test_a_per_channel_offset_never_reads_the_batch_extent():
    expr = broadcast_offset((4, 1, 1), ("N", 4, "H", 5), "i")
    assert "N" not in expr        # the outermost extent bounds the offset
    expected = np.broadcast_to(np.arange(4).reshape(4, 1, 1), (3, 4, 2, 5)).reshape(-1)
    assert [evaluate_c(expr, {"i": i, "N": 3, "H": 2}) for i in range(expected.size)] == expected.tolist()


@pytest.mark.parametrize("shape, kind", [
    ((64, 48, 80), "full"), ((1, 48, 80), "contiguous"), ((64, 1, 80), "contiguous"),
    ((64, 48, 1), "per_pack"), ((1,), "per_pack"), ((64, 1, 1), "per_pack"),
])
def test_pack_access_kinds(shape, kind):
    node = ops.input_tensor("a", F32, shape)
    assert plan_access(node, (64, 48, 80), 4).kind == kind


def test_odd_extents_fall_back_to_gathers():
    node = ops.input_tensor("a", F32, (7, 1))
    assert plan_access(node, (7, 5), 4).kind == "gather"
    assert plan_access(node, (7, 8), 4).kind == "per_pack"


def test_names_the_kernel_uses_itself_are_refused():
    clash = problem("y = x + stride; x, stride: f32[8]")
    assert "rename" in SKETCH.unsupported(clash, ARCHS["sm_90"])
    assert SKETCH.unsupported(problem("y = x + k; x, k: f32[8]"), ARCHS["sm_90"]) is None
    assert SKETCH.unsupported(problem("y = t1 * t2; t1, t2: f32[8]"), ARCHS["sm_90"]) is None
