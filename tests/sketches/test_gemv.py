"""The GEMV sketch: which problems it takes, clean compiles of its default and corners, its
index math on the CPU emulator against the reference, and DICE's own analyses stay quiet."""
from __future__ import annotations

import pytest
from cpu_emulation import assert_matches_reference, needs_emulator

from dice_engine.analysis import check_source
from dice_engine.arch import ARCHS
from dice_engine.compile import compile_cuda
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches.gemv import SAMPLE_INTENTS, WarpPerRowGemv

SKETCH = WarpPerRowGemv()
SM80, SM90 = ARCHS["sm_80"], ARCHS["sm_90"]


def problem(text: str):
    return classify(parse_intent(text))


def test_takes_matrix_vector_products_only():
    assert SKETCH.unsupported(problem("C = A @ B; A: f32[64, 32]; B: f32[32, 16]"), SM90) is not None
    assert "A.T" in SKETCH.unsupported(problem("y = A.T @ x; A: f32[32, 64]; x: f32[32, 1]"), SM90)
    for text in SAMPLE_INTENTS:
        assert SKETCH.unsupported(problem(text), SM90) is None, text


def test_vector_loads_need_a_divisible_k():
    odd = problem("y = A @ x; A: f32[100, 999]; x: f32[999, 1]")
    space = SKETCH.space(odd, SM90)
    assert not space.is_legal({"warps_per_block": 4, "vector": 4, "unroll": 2, "k_splits": 1})
    assert SKETCH.default_point(odd, SM90)["vector"] == 1
    assert SKETCH.default_point(problem(SAMPLE_INTENTS[0]), SM90)["vector"] == 4


@pytest.mark.parametrize("text", [SAMPLE_INTENTS[0], SAMPLE_INTENTS[2], SAMPLE_INTENTS[3], SAMPLE_INTENTS[4]])
@pytest.mark.parametrize("arch", [SM80, SM90], ids=["sm_80", "sm_90"])
def test_default_compiles_without_spills_and_is_clean(text, arch):
    p = problem(text)
    rendered = SKETCH.render(p, arch, SKETCH.default_point(p, arch), "gemv_test")
    result = compile_cuda(rendered.source, arch.name)
    assert result.ok, result.log
    res = result.kernel("gemv_test_kernel")
    assert res.spill_store_bytes == 0 and res.spill_load_bytes == 0
    assert check_source(rendered.source, "gemv.cu") == []


def test_corners_compile():
    p = problem(SAMPLE_INTENTS[0])
    for point in SKETCH.space(p, SM90).corners():
        result = compile_cuda(SKETCH.render(p, SM90, point, "gemv_corner").source, "sm_90")
        assert result.ok, (point, result.log)


@needs_emulator
@pytest.mark.parametrize("text,point", [
    ("y = A @ x; A: f32[37, 64]; x: f32[64, 1]",
     {"warps_per_block": 4, "vector": 4, "unroll": 2, "k_splits": 1}),
    ("y = A @ x; A: f32[5, 77]; x: f32[77, 1]",
     {"warps_per_block": 2, "vector": 1, "unroll": 4, "k_splits": 1}),
    ("y = relu(A @ x + b); A: f16[2, 9, 48]; x: f16[2, 48, 1]; b: f16[9, 1]",
     {"warps_per_block": 8, "vector": 8, "unroll": 1, "k_splits": 1}),
    # slices of unequal fill (the last is short), over batches, through the epilogue
    ("y = relu(A @ x + b); A: f32[3, 5, 8204]; x: f32[3, 8204, 1]; b: f32[5, 1]",
     {"warps_per_block": 2, "vector": 4, "unroll": 2, "k_splits": 2}),
    ("y = A @ x; A: bf16[7, 9000]; x: bf16[9000, 1]",
     {"warps_per_block": 4, "vector": 1, "unroll": 1, "k_splits": 2}),
])
def test_matches_the_reference_on_the_cpu_emulator(text, point, tmp_path):
    assert_matches_reference(SKETCH, problem(text), point, tmp_path)


def test_few_long_rows_split_k_and_many_rows_do_not():
    long_rows = problem("y = A @ x; A: f32[2048, 1048576]; x: f32[1048576, 1]")
    point = SKETCH.default_point(long_rows, SM90)
    assert point["k_splits"] > 1
    rendered = SKETCH.render(long_rows, SM90, point, "gemv_split")
    assert rendered.k_splits == point["k_splits"] and len(rendered.launches) == 2
    assert "cudaMallocAsync" in rendered.launcher and "cudaFreeAsync" in rendered.launcher
    assert SKETCH.default_point(problem(SAMPLE_INTENTS[0]), SM90)["k_splits"] == 1


@pytest.mark.parametrize("arch", [SM80, SM90], ids=["sm_80", "sm_90"])
def test_split_points_compile(arch):
    p = problem("y = A @ x; A: f32[2048, 1048576]; x: f32[1048576, 1]")
    for splits in (2, 32):
        point = {**SKETCH.default_point(p, arch), "k_splits": splits}
        source = SKETCH.render(p, arch, point, "gemv_split").source
        result = compile_cuda(source, arch.name)
        assert result.ok, (point, result.log)
        assert result.kernel("gemv_split_kernel").spill_store_bytes == 0
        assert check_source(source, "gemv_split.cu") == []
