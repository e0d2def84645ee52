"""Every convolution besides plain conv2d: the N-d implicit GEMM (`conv.implicit_gemm_nd`: 1-D/3-D,
grouped, transposed per stride phase) and the depthwise stencil (`conv.depthwise`): routing,
the phase decomposition, emulated results against the float64 reference, nvcc builds."""
from __future__ import annotations

import math

import pytest
from cpu_emulation import assert_matches_reference, needs_emulator
from layout_sketch_checks import compile_clean, needs_nvcc, private_compile_cache, problem, serving

from dice_engine.arch import ARCHS
from dice_engine.sketches import conv_depthwise, conv_nd, registry
from dice_engine.sketches.conv_depthwise import DepthwiseConv
from dice_engine.sketches.conv_geometry import ConvGeometry
from dice_engine.sketches.conv_nd import ImplicitGemmConvNd

__all__ = ["private_compile_cache"]
SM90 = ARCHS["sm_90"]
ND = ImplicitGemmConvNd()
DW = DepthwiseConv()


def tile(bm: int, bn: int, bk: int, tm: int, tn: int) -> dict:
    return {"block_m": bm, "block_n": bn, "block_k": bk, "thread_m": tm, "thread_n": tn}


SMALL = tile(32, 16, 8, 2, 2)

# KernelBench level 1's shapes (tasks 54, 72, 75, 77, 79, 82, 85).
KERNELBENCH = [
    "y = conv3d(x, w); x: f32[16, 3, 64, 64, 64]; w: f32[64, 3, 3, 3, 3]",
    "y = conv_transpose3d(x, w, stride=2, padding=(1, 2, 3), output_padding=1, groups=4); "
    "x: f32[8, 32, 12, 24, 48]; w: f32[32, 8, 3, 5, 7]",
    "y = conv_transpose2d(x, w, stride=(2, 3), padding=(1, 2), dilation=(2, 1), groups=4); "
    "x: f32[16, 32, 128, 256]; w: f32[32, 16, 3, 5]",
    "y = conv_transpose3d(x, w, stride=2, padding=1, dilation=2); x: f32[16, 32, 16, 32, 32]; "
    "w: f32[32, 64, 3, 3, 3]",
    "y = conv_transpose1d(x, w, stride=2, padding=1, dilation=2); x: f32[16, 32, 131072]; w: f32[32, 64, 3]",
    "y = conv2d(x, w, groups=64); x: f32[16, 64, 512, 512]; w: f32[64, 1, 3, 3]",
    "y = conv2d(x, w, groups=128); x: f32[32, 128, 128, 256]; w: f32[128, 1, 3, 7]",
]


@pytest.mark.parametrize("text, sketch", [
    ("y = conv3d(x, w); x: f32[2, 3, 8, 8, 8]; w: f32[4, 3, 3, 3, 3]", ND),
    ("y = conv1d(x, w, stride=2); x: f32[2, 3, 40]; w: f32[4, 3, 3]", ND),
    ("y = conv2d(x, w, groups=2); x: f32[2, 4, 8, 8]; w: f32[8, 2, 3, 3]", ND),
    ("y = conv_transpose2d(x, w, stride=2); x: f32[2, 4, 8, 8]; w: f32[4, 3, 3, 3]", ND),
    ("y = conv2d(x, w, groups=4); x: f32[2, 4, 8, 8]; w: f32[4, 1, 3, 3]", DW),
], ids=["conv3d", "conv1d", "grouped", "transposed", "depthwise"])
def test_every_convolution_is_routed_to_a_fast_path_beside_the_general_lowering(text, sketch):
    p = problem(text)
    assert p.pattern == "conv" and p.anchor.op.startswith("conv")
    names = [s.name for s in registry.candidates(p, SM90)]
    assert sketch.name in names and "generic.lowered" in names
    assert len({ND.name, DW.name} & set(names)) == 1   # depthwise is the stencil's alone


def test_plain_conv2d_stays_with_its_own_sketch():
    p = problem("y = conv2d(x, w, padding=1); x: f32[2, 4, 8, 8]; w: f32[8, 4, 3, 3]")
    assert p.pattern == "conv2d" and ND.name not in [s.name for s in registry.candidates(p, SM90)]


@pytest.mark.parametrize("text", KERNELBENCH[1:5])
def test_stride_phases_skip_every_tap_that_does_not_divide(text):
    """Summed over groups and phases, M*N*K counts exactly the (output, tap) pairs where
    (o + pad - k*dil) is divisible by the stride (brute force per dimension): the taps a
    scatter would never send to that output cost nothing."""
    p = problem(text)
    geo = ConvGeometry(p)
    macs = sum(geo.phase_m(ph) * geo.out_channels_g * geo.phase_k(ph) for ph in geo.phases) * geo.groups
    pairs = [sum(1 for o in range(out) for t in range(k) if (o + pad - t * d) % s == 0)
             for out, k, s, pad, d in zip(geo.out_size, geo.kernel, geo.stride, geo.padding, geo.dilation)]
    assert macs == geo.batch_hint * geo.out_channels_g * geo.channels * math.prod(pairs)
    every_tap = math.prod(geo.out_size) * geo.kernel_volume
    # stride >= 2 along some dimension: at least half the taps are skipped
    assert macs * 2 <= geo.batch_hint * geo.out_channels_g * geo.channels * every_tap


def test_phase_geometry_of_a_strided_dilated_dimension():
    geo = ConvGeometry(problem("y = conv_transpose1d(x, w, stride=4, padding=1, dilation=2); "
                               "x: f32[1, 1, 10]; w: f32[1, 1, 5]"))
    axes = [phase[2] for phase in geo.phases]
    assert len(axes) == 4 and sum(a.count for a in axes) == geo.out_size[2]
    for a in axes:   # every listed tap of every output of the phase reads input (o + 1 - 2k) / 4
        for j in range(a.count):
            o = a.o0 + a.o_step * j
            taps = [a.k0 + a.k_step * t for t in range(a.taps)]
            assert taps == [k for k in range(5) if (o + 1 - 2 * k) % 4 == 0]
            reads = [a.i0 + j * a.j_mul + t * a.a_mul for t in range(a.taps)]
            assert reads == [(o + 1 - 2 * k) // 4 for k in taps]


def test_text_names_strategy_groups_and_phases():
    p = problem(KERNELBENCH[1])
    source = ND.render(p, SM90, ND.default_point(p, SM90), "ct3d").source
    header = source.splitlines()[0]
    assert "gathered per stride phase" in header and "4 groups" in header and "8 stride phase(s)" in header
    assert "constexpr int kPhases = 8;" in source and "case 7: conv_phase<Phase7>" in source
    dw = problem(KERNELBENCH[5])
    assert "direct stencil" in DW.render(dw, SM90, DW.default_point(dw, SM90), "dw").source.splitlines()[0]


def test_the_phases_of_one_region_are_launched_side_by_side():
    """A phase alone fills 32-byte sectors partly (it writes every stride-th element); with the
    phase as blockIdx.x's fastest part, consecutive blocks are the phases of one output region,
    so their stores meet in L2. Groups move to z, off the phase product."""
    p = problem(KERNELBENCH[1])
    geo = ConvGeometry(p)
    point = ND.default_point(p, SM90)
    kernel = ND.render(p, SM90, point, "ct3d")
    (launch,) = kernel.launches
    tiles = -(-geo.max_m // point["block_m"])
    assert launch.grid[0] == tiles * len(geo.phases) and launch.grid[2] == geo.groups
    assert "const int phase = blockIdx.x % kPhases;" in kernel.source
    assert "const long long m_tile = blockIdx.x / kPhases;" in kernel.source


def test_prologue_is_refused():
    p = problem("y = conv3d(relu(x), w); x: f32[2, 3, 8, 8, 8]; w: f32[4, 3, 3, 3, 3]")
    assert "prologue" in ND.unsupported(p, SM90)


@needs_emulator
@pytest.mark.parametrize("text, point", [
    ("y = conv3d(x, w, padding=1); x: f32[2, 3, 5, 6, 7]; w: f32[5, 3, 3, 3, 3]", SMALL),
    ("y = conv1d(x, w, b, stride=2, dilation=3); x: f32[2, 4, 30]; w: f32[6, 4, 5]; b: f32[6]",
     SMALL),
    ("y = conv2d(x, w, padding=1, groups=4); x: f32[2, 8, 7, 6]; w: f32[12, 2, 3, 3]",
     tile(32, 32, 16, 4, 2)),
    ("y = conv_transpose2d(x, w, stride=2, padding=1, output_padding=1); x: f32[2, 3, 5, 4]; "
     "w: f32[3, 5, 3, 3]",
     SMALL),
    ("y = relu(conv_transpose3d(x, w, b, stride=2, padding=1, groups=2)); x: f32[2, 4, 3, 4, 3]; "
     "w: f32[4, 3, 3, 2, 3]; b: f32[6]", SMALL),
    ("y = conv_transpose1d(x, w, stride=3, padding=2, dilation=2); x: f64[2, 6, 9]; w: f64[6, 5, 4]", SMALL),
    ("y = conv_transpose2d(x, w, stride=(3, 2), padding=(1, 2), dilation=(2, 3), groups=3); "
     "x: bf16[1, 6, 4, 5]; w: bf16[6, 2, 3, 4]", SMALL),
    ("y = conv_transpose1d(x, w, b, stride=4); x: f32[2, 3, 5]; w: f32[3, 2, 2]; b: f32[2]", SMALL),
    ("y = conv3d(x, w, stride=2, groups=2); x: f32[N, 4, 5, 5, 6]; w: f32[6, 2, 2, 3, 2]; N=3", SMALL),
    # A per-channel operand (C, 1, 1, 1) after a transposed 3-D convolution (level 2's 74 and 77).
    ("y = leaky_relu(conv_transpose3d(x, w, stride=2) * s); x: f32[2, 3, 3, 2, 3]; w: f32[3, 4, 2, 2, 2]; "
     "s: f32[4, 1, 1, 1]", SMALL),
], ids=["conv3d-padded", "conv1d-strided-dilated-bias", "grouped-conv2d", "transposed2d-output-padding",
        "transposed3d-grouped-bias-relu", "transposed1d-dilated-f64", "transposed2d-mixed-grouped-bf16",
        "transposed1d-phases-without-taps", "conv3d-symbolic-batch-grouped", "transposed3d-per-channel"])
def test_implicit_gemm_nd_computes_the_reference_on_the_cpu_emulator(text, point, tmp_path):
    assert_matches_reference(ND, problem(text), point, tmp_path)


@needs_emulator
@pytest.mark.parametrize("text, point", [
    ("y = conv2d(x, w, padding=1, groups=3); x: f32[2, 3, 19, 37]; w: f32[3, 1, 3, 3]",
     {"threads_h": 2, "rows": 4, "cols": 1}),
    ("y = relu(conv2d(x, w, b, stride=2, padding=(1, 3), groups=2)); x: f32[1, 2, 21, 40]; "
     "w: f32[4, 1, 3, 7]; b: f32[4]", {"threads_h": 2, "rows": 2, "cols": 2}),
    ("y = conv1d(x, w, padding=2, dilation=2, groups=2); x: f32[2, 2, 75]; w: f32[2, 1, 5]", None),
    ("y = conv2d(x, w, stride=(1, 2), padding=(2, 0), dilation=(2, 1), groups=2); x: f64[1, 2, 17, 33]; "
     "w: f64[2, 1, 3, 2]", {"threads_h": 2, "rows": 8, "cols": 1}),
    ("y = conv2d(x, w, padding=1, groups=2); x: f16[N, 2, 9, 40]; w: f16[2, 1, 3, 3]; N=2", None),
], ids=["3x3-padded", "multiplier-strided-bias-relu", "conv1d-dilated-default", "mixed-f64",
        "symbolic-batch-f16"])
def test_depthwise_computes_the_reference_on_the_cpu_emulator(text, point, tmp_path):
    p = problem(text)
    assert_matches_reference(DW, p, point or DW.default_point(p, SM90), tmp_path)


@needs_nvcc
def test_samples_and_kernelbench_shapes_compile_without_spills():
    texts = conv_nd.SAMPLE_INTENTS + conv_depthwise.SAMPLE_INTENTS + KERNELBENCH
    rendered = [sketch.render(p, SM90, sketch.default_point(p, SM90), f"c{i}_{j}")
                for i, text in enumerate(texts)
                for j, (sketch, p) in enumerate(serving([ND, DW], text))]
    assert len(rendered) == len(texts)
    compile_clean(rendered, "sm_90")
