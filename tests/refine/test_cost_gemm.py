"""The cost model on real SIMT GEMM and GEMV kernels (rendered by the sketches, compiled by nvcc):
the no-GPU picks at KernelBench level-1 shapes that an audit on the H200 found wrong."""

from __future__ import annotations

import shutil

import pytest

from dice_engine.api import CUDAGenerator
from dice_engine.arch import resolve
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.refine import estimate
from dice_engine.refine.cost_gemm import simt_issue_efficiency
from dice_engine.refine.loop import compile_rendered
from dice_engine.sketches.gemm import SimtGemm
from dice_engine.sketches.gemv import WarpPerRowGemv

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) not installed")

H100 = resolve("sm_90")
SQUARE = "C = A @ B; A: f32[4096, 4096]; B: f32[4096, 4096]"
BATCHED = "C = A @ B; A: f32[128, 512, 1024]; B: f32[128, 1024, 2048]"
GEMV = "C = A @ B; A: f32[2048, 1048576]; B: f32[1048576, 1]"
BIG_TILE = {
    "block_m": 128,
    "block_n": 128,
    "block_k": 8,
    "thread_m": 8,
    "thread_n": 8,
    "vector": 4,
    "buffering": 2,
    "k_splits": 1,
}
SMALL_TILE = {
    "block_m": 64,
    "block_n": 64,
    "block_k": 16,
    "thread_m": 4,
    "thread_n": 4,
    "vector": 1,
    "buffering": 2,
    "k_splits": 1,
}


def _cost(sketch, intent: str, point: dict) -> float:
    problem = classify(parse_intent(intent))
    rendered = sketch.render(problem, H100, point, "k")
    est = estimate(problem, H100, rendered, compile_rendered(rendered, H100))
    return est


def test_an_8x8_register_tile_issues_a_larger_share_of_fmas_than_a_4x4_one():
    big = simt_issue_efficiency(BIG_TILE, a_transposed_store=True, b_transposed_store=False)
    small = simt_issue_efficiency(SMALL_TILE, a_transposed_store=True, b_transposed_store=False)
    assert 0.85 < big < 1.0 and small < 0.75 * big


def test_the_cp_async_ring_issues_copies_instead_of_loads_and_stores():
    """Per 16-deep slice of a transposed A tile, register staging issues a load and four scalar
    stores per float4; the ring four 4-byte copies: fewer issue slots away from the FMAs."""
    tile = {**BIG_TILE, "block_k": 16}
    staged = simt_issue_efficiency(tile, a_transposed_store=True, b_transposed_store=False)
    ring = simt_issue_efficiency(tile, a_transposed_store=True, b_transposed_store=False, ring=True)
    assert staged < ring < 1.0


@pytest.mark.parametrize("intent", [SQUARE, BATCHED], ids=["square_4096", "batched_128x512x1024x2048"])
def test_big_register_tiles_beat_small_ones_on_big_f32_products(intent):
    assert _cost(SimtGemm(), intent, BIG_TILE).time_us < 0.9 * _cost(SimtGemm(), intent, SMALL_TILE).time_us


def test_split_k_on_a_square_product_pays_for_its_merge_pass():
    """4096² has 1024 tiles of 128²: splitting K only adds the partials' round trip."""
    whole = _cost(SimtGemm(), SQUARE, BIG_TILE)
    split = _cost(SimtGemm(), SQUARE, {**BIG_TILE, "k_splits": 4})
    small_split = _cost(SimtGemm(), SQUARE, {**SMALL_TILE, "k_splits": 16})
    assert whole.time_us < split.time_us < small_split.time_us
    assert any("split-K merge pass" in note for note in split.notes)


def test_gemv_wide_loads_keep_enough_bytes_in_flight():
    point = {"warps_per_block": 4, "unroll": 2, "k_splits": 32}
    wide = _cost(WarpPerRowGemv(), GEMV, {**point, "vector": 4})
    narrow = _cost(WarpPerRowGemv(), GEMV, {**point, "vector": 1})
    assert wide.time_us < narrow.time_us
    assert any("loads in flight" in note for note in narrow.notes)


def test_a_tile_past_the_matrix_edge_costs_its_whole_area():
    """A 64x64 tile over a one-column B multiplies 64 columns, 63 of them padding, as long as over
    64 real ones; the GEMV sketch must stay cheaper (the tiled kernel was the no-GPU pick for
    KernelBench's GEMV while padding cost nothing, at 27% of cuBLAS on an H100)."""
    point = {**SMALL_TILE, "k_splits": 128, "buffering": 4}
    one_column = _cost(SimtGemm(), GEMV, point)
    full_tile = _cost(SimtGemm(), GEMV.replace("f32[1048576, 1]", "f32[1048576, 64]"), point)
    assert one_column.compute_us == pytest.approx(full_tile.compute_us, rel=0.01)
    assert any("edge tiles" in note for note in one_column.notes)
    gemv = _cost(WarpPerRowGemv(), GEMV, {"warps_per_block": 4, "unroll": 2, "k_splits": 32, "vector": 4})
    assert gemv.time_us < one_column.time_us


def test_dice_generate_without_a_gpu_picks_the_big_vectorized_tile_for_4096_squared():
    result = CUDAGenerator("sm_90", default_shape=None).generate(SQUARE)
    tokens = result.tokens
    assert result.sketch == "gemm.simt_tiled"
    assert (tokens["block_m"], tokens["block_n"], tokens["vector"], tokens["k_splits"]) == (128, 128, 4, 1)
    assert tokens["thread_m"] * tokens["thread_n"] == 64
