"""Permute sketches: the simplified layout's index math, which sketch serves what, the design
space's constraints and defaults, the rendered text, and nvcc/ptxas builds."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from cpu_emulation import assert_matches_reference, needs_emulator
from layout_sketch_checks import (compile_clean, needs_nvcc, private_compile_cache, problem, serving,
                                  some_points)

from dice_engine.arch import ARCHS
from dice_engine.ir import ops
from dice_engine.ir.dtypes import F32
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.patterns import classify
from dice_engine.sketches import transpose
from dice_engine.sketches.transpose import GatherCopy, TiledTranspose, simplify

__all__ = ["private_compile_cache"]
SM90 = ARCHS["sm_90"]
TILED, GATHER = TiledTranspose(), GatherCopy()


def permute_problem(shape: tuple[int, ...], dims: tuple[int, ...]):
    x = ops.input_tensor("x", F32, shape)
    y = ops.make("permute", [x], dims=dims)
    return classify(Program({"x": TensorDecl("x", F32, shape)}, "y", y))


@pytest.mark.parametrize("shape, dims", [
    ((6, 5), (1, 0)),
    ((2, 3, 4), (0, 2, 1)),
    ((2, 3, 4, 5), (0, 2, 1, 3)),
    ((2, 3, 4, 5), (3, 2, 1, 0)),
    ((2, 1, 4, 5, 3), (1, 4, 0, 2, 3)),   # size-1 dim dropped, (2, 3) merged
    ((3, 1, 5), (1, 0, 2)),               # only a size-1 dim moves: a plain copy
])
def test_simplified_layout_maps_every_element_like_numpy(shape, dims):
    layout = simplify(permute_problem(shape, dims))
    sizes = [int(np.prod(s)) for s in layout.sizes]
    in_strides = [int(np.prod(layout.in_stride(d))) for d in range(layout.rank)]
    out_strides = [int(np.prod(layout.out_stride(d))) for d in range(layout.rank)]
    source = np.arange(int(np.prod(shape)))
    expected = np.transpose(source.reshape(shape), dims).ravel()
    moved = np.empty_like(source)
    for index in itertools.product(*(range(s) for s in sizes)):
        source_offset = sum(i * s for i, s in zip(index, in_strides))
        moved[sum(i * s for i, s in zip(index, out_strides))] = source[source_offset]
    assert (moved == expected).all()


def test_merging_and_dropping_dims():
    # [2, 1, 4, 5, 3] -> dims (1, 4, 0, 2, 3): the size-1 dim goes, dims 0, 2, 3 move together,
    # leaving the 2-D transpose of a [40, 3] matrix
    assert simplify(permute_problem((2, 1, 4, 5, 3), (1, 4, 0, 2, 3))) == \
        transpose.Layout(sizes=((2, 4, 5), (3,)), perm=(1, 0))
    assert simplify(permute_problem((3, 1, 5), (1, 0, 2))).rank <= 1
    assert simplify(permute_problem((8, 512, 12, 64), (0, 2, 1, 3))).perm == (0, 2, 1, 3)


def test_tiled_serves_last_dim_moves_and_gather_the_rest():
    moves = problem("y = transpose(x, 1, 2); x: f32[16, 1024, 768]")
    keeps = problem("y = transpose(x, 1, 2); x: bf16[8, 512, 12, 64]")
    assert TILED.unsupported(moves, SM90) is None and GATHER.unsupported(keeps, SM90) is None
    assert "keeps the last dim" in TILED.unsupported(keeps, SM90)
    assert "moves the last dim" in GATHER.unsupported(moves, SM90)


def test_broadcast_epilogue_operand_is_served():
    p = problem("y = x.T + b; x: f32[64, 32]; b: f32[64]")
    assert TILED.unsupported(p, SM90) is None


def test_defaults_follow_the_element_size():
    assert TILED.default_point(problem("y = x.T; x: f32[16384, 16384]"), SM90) == \
        {"tile": 64, "vec": 1, "block_rows": 4}
    assert TILED.default_point(problem("y = x.T; x: f16[4096, 8192]"), SM90) == \
        {"tile": 64, "vec": 2, "block_rows": 8}
    assert TILED.default_point(problem("y = x.T; x: f64[2048, 1024]"), SM90)["tile"] == 32
    assert TILED.default_point(problem("y = x.T; x: bf16[1000, 777]"), SM90)["vec"] == 1   # 777 is odd
    assert GATHER.default_point(problem("y = transpose(x, 1, 2); x: bf16[8, 512, 12, 64]"), SM90)["vec"] == 8


def test_constraints_reject_illegal_points():
    odd = problem("y = x.T; x: f16[1000, 777]")
    symbolic = problem("y = x.T; x: f16[N, 1000]; N=777")
    wide = problem("y = x.T; x: f64[64, 64]")
    space = TILED.space(odd, SM90)
    assert any("known multiples" in v for v in space.violations({"tile": 64, "vec": 2, "block_rows": 8}))
    assert not TILED.space(symbolic, SM90).is_legal({"tile": 64, "vec": 2, "block_rows": 8})
    wide_point = {"tile": 64, "vec": 4, "block_rows": 16}
    assert any("16-byte" in v for v in TILED.space(wide, SM90).violations(wide_point))
    assert any("threads per block" in v for v in space.violations({"tile": 32, "vec": 4, "block_rows": 2}))
    assert any("not one of" in v for v in space.violations({"tile": 48, "vec": 1, "block_rows": 8}))
    with pytest.raises(ValueError, match="illegal point"):
        TILED.render(odd, SM90, {"tile": 64, "vec": 2, "block_rows": 8}, "bad")


def test_tiled_text_shows_padding_vectors_and_one_barrier():
    p = problem("y = x.T; x: f16[4096, 8192]")
    source = TILED.render(p, SM90, TILED.default_point(p, SM90), "t_half").source
    assert "tile[kTile][kTile + kPad]" in source and "constexpr int kPad = 1;" in source
    assert "constexpr int kTile = 64;" in source and "64x65" in source.splitlines()[0]
    assert "Pack<__half, kVec>" in source and "constexpr int kVec = 2;" in source
    assert source.count("__syncthreads()") == 1
    assert "namespace dice_t_half {" in source
    assert 'extern "C" void t_half_launch(const __half* x, __half* y, cudaStream_t stream)' in source


def test_padding_keeps_tile_rows_one_word_apart():
    cases = [(4, 1), (2, 2), (2, 1), (1, 2), (1, 1), (8, 1)]   # (element bytes, vec)
    assert [transpose.tile_padding(elem, vec) for elem, vec in cases] == [1, 1, 2, 2, 4, 1]
    p = problem("y = x.T; x: bf16[1000, 777]")     # odd extents: one element per access
    source = TILED.render(p, SM90, TILED.default_point(p, SM90), "t_odd").source
    assert "constexpr int kPad = 2;" in source and "64x66" in source.splitlines()[0]


@pytest.mark.parametrize("text", [t for t in transpose.SAMPLE_INTENTS if ".T" in t])
def test_default_tiles_have_no_bank_conflicts_by_static_analysis(text):
    from dice_engine.analysis import check_source
    p = problem(text)
    source = TILED.render(p, SM90, TILED.default_point(p, SM90), "t_banks").source
    assert [f.message for f in check_source(source) if f.category == "bank-conflict"] == []


def test_fused_prologue_and_epilogue_appear_in_the_text():
    p = problem("y = relu(x * 2.0).T + b; x: f32[3000, 5000]; b: f32[5000, 3000]")
    source = TILED.render(p, SM90, TILED.default_point(p, SM90), "t_fused").source
    assert "fmaxf(" in source and "* 2.0f" in source and "b[out_offset]" in source
    assert "fused prologue and epilogue" in source.splitlines()[0]


def test_symbols_become_parameters():
    p = problem("y = transpose(x, 0, 1); x: f32[B, 12, 512, 64]; B=8")
    rendered = GATHER.render(p, SM90, GATHER.default_point(p, SM90), "t_sym")
    assert [(q.name, q.role) for q in rendered.params] == [("x", "input"), ("y", "output"), ("B", "symbol")]
    assert "(long long)B" in rendered.source


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_sample_defaults_compile_without_spills(arch):
    rendered = [sketch.render(p, ARCHS[arch], sketch.default_point(p, ARCHS[arch]), f"sample{i}_{j}")
                for i, text in enumerate(transpose.SAMPLE_INTENTS)
                for j, (sketch, p) in enumerate(serving(transpose.SKETCHES, text, arch))]
    assert len(rendered) == len(transpose.SAMPLE_INTENTS)
    compile_clean(rendered, arch)


@needs_nvcc
@pytest.mark.parametrize("text", [
    "y = x.T; x: f16[1024, 512]",
    "y = relu(x.T) + b; x: f32[N, 1000]; b: f32[1000, N]; N=777",
    "y = transpose(x, 1, 2); x: u8[8, 64, 12, 64]",
])
def test_design_space_points_compile_without_spills(text):
    rendered = [sketch.render(p, SM90, point, f"pt{i}_{k}")
                for i, (sketch, p) in enumerate(serving(transpose.SKETCHES, text))
                for k, point in enumerate(some_points(sketch, p, "sm_90"))]
    compile_clean(rendered, "sm_90")


@needs_emulator
@pytest.mark.parametrize("sketch, text, point", [
    (TILED, "y = x.T; x: f32[100, 70]", {"tile": 32, "vec": 1, "block_rows": 8}),
    (TILED, "y = transpose(x, 0, 2) * 3.0; x: f16[64, B, 96]; B=3", {"tile": 64, "vec": 2, "block_rows": 8}),
    (TILED, "y = relu(x.T) + b; x: f32[N, 40]; b: f32[40, N]; N=77", None),
    (TILED, "y = x.T; x: u8[64, 128]", None),
    (GATHER, "y = transpose(x, 1, 2); x: bf16[B, 5, 3, 16]; B=2", None),
    (GATHER, "y = transpose(relu(x), 0, 1) + x; x: f32[4, 4, 8]", {"vec": 1, "threads": 128, "items": 4}),
    # Broadcast epilogue operands read element by element beside vector stores of the output.
    (TILED, "y = x.T * s + t; x: f16[64, 96]; s: f32[96, 1]; t: f16[64]",
     {"tile": 64, "vec": 2, "block_rows": 8}),
], ids=["tails", "batch-symbol-vec2-epilogue", "fused", "u8-vec4", "gather-vec8", "gather-fused",
        "broadcast-operands-vec2"])
def test_kernels_compute_the_reference_on_the_cpu_emulator(sketch, text, point, tmp_path):
    p = problem(text)
    assert_matches_reference(sketch, p, point or sketch.default_point(p, SM90), tmp_path)
