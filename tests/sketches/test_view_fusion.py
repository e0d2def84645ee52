"""Views (slice, pad, flip, reshape, a position index) fused into the linear-offset prologues and
epilogues of the scan, transpose, pool and convolution sketches: the classification that hands
such programs to those families, and the kernels run on the CPU emulator against the reference."""
from __future__ import annotations

import pytest
from cpu_emulation import assert_matches_reference, needs_emulator
from layout_sketch_checks import private_compile_cache, problem

from dice_engine.arch import ARCHS
from dice_engine.ir import ops
from dice_engine.ir.dtypes import F16, F32
from dice_engine.ir.graph import Node, Program, TensorDecl
from dice_engine.ir.patterns import Problem, classify
from dice_engine.sketches.conv_nd import ImplicitGemmConvNd
from dice_engine.sketches.pool import DirectPool
from dice_engine.sketches.scan import BlockRowScan, ColumnScan, MultiBlockRowScan, WarpRowScan
from dice_engine.sketches.transpose import GatherCopy, TiledTranspose

__all__ = ["private_compile_cache"]
SM90 = ARCHS["sm_90"]
WARP, BLOCK, MULTI, COLUMN = WarpRowScan(), BlockRowScan(), MultiBlockRowScan(), ColumnScan()
TILED, GATHER, POOL, CONV = TiledTranspose(), GatherCopy(), DirectPool(), ImplicitGemmConvNd()


def program(output: Node, *inputs: Node) -> Problem:
    decls = {n.name: TensorDecl(n.name, n.dtype, n.shape) for n in inputs if n.name}
    return classify(Program(decls, "y", output))


def narrowed_row_scan() -> Problem:
    """cumsum over x[:, :-1] (level 1's exclusive cumsum before its leading zero)."""
    x = ops.input_tensor("x", F32, (3, 334))
    return program(ops.make("cumsum", [ops.make("slice", [x], dim=1, start=0, end=333)], dim=1), x)


def padded_pool() -> Problem:
    """max_pool2d of a reflect-padded plane (F.pad, then the pool)."""
    x = ops.input_tensor("x", F32, (2, 3, 9, 10))
    padded = ops.make("pad", [x], pads=((0, 0), (0, 0), (1, 2), (2, 1)), mode="reflect")
    return program(ops.make("max_pool2d", [padded], kernel_size=(3, 3), stride=(2, 2)), x)


def strided_transpose() -> Problem:
    """The transpose of every other row of a half matrix, scaled."""
    x = ops.input_tensor("x", F16, (64, 96))
    rows = ops.make("slice", [x], dim=0, start=1, end=64, step=2)
    return program(ops.make("mul", [ops.make("permute", [rows], dims=(1, 0)), ops.const(2.0)]), x)


def scan_plus_shifted() -> Problem:
    """An epilogue reading another tensor through a view: cumsum(x) + z shifted by one column."""
    x = ops.input_tensor("x", F32, (4, 300))
    z = ops.input_tensor("z", F32, (4, 301))
    shifted = ops.make("slice", [z], dim=1, start=1, end=301)
    return program(ops.make("add", [ops.make("cumsum", [x], dim=1), shifted]), x, z)


def conv_plus_padded_bias() -> Problem:
    """A transposed 1-D convolution whose epilogue adds a zero-padded per-position operand."""
    x = ops.input_tensor("x", F32, (2, 3, 7))
    w = ops.input_tensor("w", F32, (3, 4, 3))
    r = ops.input_tensor("r", F32, (4, 13))
    conv = ops.make("conv_transpose1d", [x, w], stride=2)
    return program(ops.make("add", [conv, ops.make("pad", [r], pads=((0, 0), (1, 1)), value=0.5)]), x, w, r)


@pytest.mark.parametrize("build, pattern", [
    (narrowed_row_scan, "scan"), (padded_pool, "pool"), (strided_transpose, "transpose"),
    (scan_plus_shifted, "scan"), (conv_plus_padded_bias, "conv"),
])
def test_views_around_a_linear_offset_family_stay_with_it(build, pattern):
    assert build().pattern == pattern


def test_views_around_other_families_go_to_the_general_lowering():
    x = ops.input_tensor("x", F32, (8, 64))
    narrowed = ops.make("slice", [x], dim=1, start=0, end=63)
    assert program(ops.make("sum", [narrowed], dims=(1,)), x).pattern == "program"
    assert program(ops.make("softmax", [narrowed], dim=1), x).pattern == "program"


def test_an_epilogue_that_re_addresses_the_anchor_is_refused():
    """flip(cumsum(x)) along the other dim: the element a thread holds is not the one it writes."""
    p = problem("y = flip(cumsum(x, dim=1), dims=[0]); x: f32[4, 300]")
    assert p.pattern == "scan"
    assert "re-addresses the anchor" in BLOCK.unsupported(p, SM90)


@needs_emulator
@pytest.mark.parametrize("sketch, build, point", [
    (WARP, narrowed_row_scan, {"items": 4, "warps": 2}),
    (BLOCK, narrowed_row_scan, {"threads": 128, "items": 2}),
    (COLUMN, lambda: problem("y = cumsum(flip(reshape(x, [40, 30]), dims=[1]), dim=0); x: f32[1200]"),
     {"threads_x": 32, "split": 4}),
    (WARP, scan_plus_shifted, {"items": 4, "warps": 2}),
    (POOL, padded_pool, {"block_x": 32, "block_y": 2, "outputs": 2, "layout": "direct"}),
    (POOL, padded_pool, {"block_x": 32, "block_y": 2, "outputs": 1, "layout": "separable"}),
    (TILED, strided_transpose, {"tile": 64, "vec": 2, "block_rows": 8}),
    (GATHER, lambda: problem("y = transpose(flip(x, dims=[2]), 1, 2); x: f32[2, 5, 3, 16]"),
     {"vec": 4, "threads": 128, "items": 2}),
    (CONV, conv_plus_padded_bias, None),
], ids=["warp-narrowed-vector", "block-narrowed", "column-flipped-reshaped", "warp-shifted-epilogue",
        "pool-reflect-padded", "pool-separable-reflect-padded", "tiled-strided-rows-vec2",
        "gather-flipped-vec4", "conv-transposed-padded-operand"])
def test_fused_views_compute_the_reference_on_the_cpu_emulator(sketch, build, point, tmp_path):
    p = build()
    assert sketch.unsupported(p, SM90) is None
    assert_matches_reference(sketch, p, point or sketch.default_point(p, SM90), tmp_path)


@needs_emulator
def test_a_multi_block_scan_reads_a_narrowed_operand(tmp_path):
    x = ops.input_tensor("x", F32, (2, 9002))
    p = program(ops.make("cumsum", [ops.make("slice", [x], dim=1, start=1, end=9002)], dim=1), x)
    assert_matches_reference(MULTI, p, {"threads": 128, "items": 2, "tile_chunks": 2}, tmp_path)
