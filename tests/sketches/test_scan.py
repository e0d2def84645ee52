"""cumsum sketches: which serves what, accumulator types, constraints, the rendered text, and
nvcc/ptxas builds."""
from __future__ import annotations

import pytest
from cpu_emulation import assert_matches_reference, needs_emulator
from layout_sketch_checks import (compile_clean, needs_nvcc, private_compile_cache, problem, serving,
                                  some_points)

from dice_engine.arch import ARCHS
from dice_engine.sketches import scan
from dice_engine.sketches.scan import BlockRowScan, ChainedRowScan, ColumnScan, MultiBlockRowScan, WarpRowScan

__all__ = ["private_compile_cache"]
SM90 = ARCHS["sm_90"]
WARP, BLOCK, MULTI, COLUMN = WarpRowScan(), BlockRowScan(), MultiBlockRowScan(), ColumnScan()
CHAINED = ChainedRowScan()


def names(text: str) -> list[str]:
    return [s.name for s, _ in serving(scan.SKETCHES, text)]


def test_row_and_column_scans_go_to_their_sketches():
    assert names("y = cumsum(x, dim=1); x: f32[4096, 1024]") == ["scan.warp_row", "scan.block_row"]
    assert names("y = cumsum(x, dim=1); x: f32[B, L]; B=3; L=1000000") == \
        ["scan.warp_row", "scan.block_row", "scan.multi_block_row", "scan.chained_row"]   # L: runtime
    assert names("y = cumsum(x, dim=1); x: bf16[4, 100003]") == \
        ["scan.block_row", "scan.multi_block_row", "scan.chained_row"]
    assert names("y = cumsum(x, dim=0); x: f32[4096, 1024]") == ["scan.column"]
    assert names("y = cumsum(x, dim=1); x: f32[7, 9, 1]") == ["scan.warp_row", "scan.block_row"]
    short = problem("y = cumsum(x, dim=1); x: f32[64, 1000]")
    assert "fit one block" in MULTI.unsupported(short, SM90)
    assert "one tile" in CHAINED.unsupported(short, SM90)
    assert "scan.column" in WARP.unsupported(problem("y = cumsum(x, dim=0); x: f32[64, 1000]"), SM90)


def test_cumprod_and_scans_from_the_end_of_a_row_go_to_the_scan_sketches():
    assert names("y = cumprod(x, dim=1); x: f32[4096, 1024]") == ["scan.warp_row", "scan.block_row"]
    reverse = "y = flip(cumsum(flip(x, dims=[1]), dim=1), dims=[1]); x: f32[32, 32768]"
    assert names(reverse) == ["scan.block_row", "scan.multi_block_row", "scan.chained_row"]
    point = {"threads": 128, "items": 4, "tile_chunks": 2}
    source = MULTI.render(problem(reverse), SM90, point, "rev").source
    assert "row_base + length - (first + kThreads * kItems) - kItems" in source and "from the end" in source
    # flips on another dim are not a reversed scan, and an output flip re-addresses the scan's
    # result: the general lowering's. A flip of the operand alone is a view the row sketches read.
    assert names("y = flip(cumsum(flip(x, dims=[0]), dim=1), dims=[1]); x: f32[32, 32768]") == []
    assert names("y = cumsum(flip(x, dims=[1]), dim=1); x: f32[32, 32768]") == \
        ["scan.block_row", "scan.multi_block_row", "scan.chained_row"]
    assert "inner dim" in COLUMN.unsupported(
        problem("y = flip(cumsum(flip(x, dims=[0]), dim=0), dims=[0]); x: f32[64, 100]"), SM90)


@pytest.mark.parametrize("text, acc", [
    ("y = cumsum(x, dim=1); x: f16[64, 1000]", "float"),
    ("y = cumsum(x, dim=1); x: bf16[64, 1000]", "float"),
    ("y = cumsum(x, dim=1); x: f64[64, 1000]", "double"),
    ("y = cumsum(x, dim=1); x: i32[64, 1000]", "long long"),
    ("y = cumsum(x, dim=1); x: u8[64, 1000]", "long long"),
])
def test_accumulator_types_follow_torch(text, acc):
    p = problem(text)
    source = BLOCK.render(p, SM90, BLOCK.default_point(p, SM90), "acc").source
    assert f"using Acc = {acc};" in source


def test_vector_access_only_when_rows_stay_aligned():
    aligned = problem("y = cumsum(x, dim=1); x: f32[N, 1000]; N=777")
    odd = problem("y = cumsum(x, dim=1); x: f32[1024, 333]")
    text_aligned = WARP.render(aligned, SM90, {"items": 4, "warps": 4}, "al").source
    text_odd = WARP.render(odd, SM90, {"items": 4, "warps": 4}, "od").source
    assert "Pack<float, 4>" in text_aligned and "(vector access)" in text_aligned
    assert "Pack<" not in text_odd and "(scalar access)" in text_odd
    assert WARP.default_point(odd, SM90)["items"] == 1


def test_constraints_reject_illegal_points():
    column = problem("y = cumsum(x, dim=0); x: f32[4096, 1024]")
    assert any("exceed" in v for v in COLUMN.space(column, SM90).violations({"threads_x": 256, "split": 16}))
    rows = problem("y = cumsum(x, dim=1); x: f32[64, 1000]")
    assert any("not one of" in v for v in WARP.space(rows, SM90).violations({"items": 3, "warps": 4}))
    with pytest.raises(ValueError, match="illegal point"):
        COLUMN.render(column, SM90, {"threads_x": 256, "split": 16}, "bad")


def test_multi_block_is_three_deterministic_passes_with_a_kept_workspace():
    p = problem("y = cumsum(x, dim=1); x: f32[B, L]; B=3; L=1000000")
    rendered = MULTI.render(p, SM90, MULTI.default_point(p, SM90), "long_scan")
    assert [launch.kernel for launch in rendered.launches] == \
        ["long_scan_tile_sums_kernel", "long_scan_tile_offsets_kernel", "long_scan_kernel"]
    assert "static char* workspace = nullptr;" in rendered.launcher and "cudaMalloc" in rendered.launcher
    assert "atomic" not in rendered.source
    assert "long long B, long long L, cudaStream_t stream" in rendered.launcher


def test_chained_scan_is_one_pass_with_a_ticket_and_a_zeroed_workspace():
    p = problem("y = cumsum(x, dim=1); x: f32[32768, 32768]")
    rendered = CHAINED.render(p, SM90, CHAINED.default_point(p, SM90), "chain")
    assert [launch.kernel for launch in rendered.launches] == ["chain_kernel"]
    tiles = 32768 * -(-32768 // (256 * 4 * 4))
    assert rendered.launches[0].blocks == tiles
    # the flags and the ticket are zeroed on the stream before every launch, the kernel after it
    memset, launch = rendered.launcher.index("cudaMemsetAsync(flags"), rendered.launcher.index("<<<")
    assert memset < launch
    # a tile's place in its row comes from the ticket, never from blockIdx
    kernel = rendered.source[rendered.source.index("__global__"):]
    assert "atomicAdd(ticket, 1u)" in kernel and "blockIdx" not in kernel


def test_block_scan_barriers_sit_outside_divergent_code():
    p = problem("y = cumsum(x, dim=1); x: f32[64, 5000]")
    source = BLOCK.render(p, SM90, BLOCK.default_point(p, SM90), "bar").source
    kernel = source[source.index("__global__"):source.index("}  // namespace")]
    assert "__syncthreads" not in kernel          # only inside block_exclusive_scan ...
    assert "return" not in kernel                 # ... which no thread can skip by leaving early


def test_column_split_combines_segments_in_shared_memory():
    p = problem("y = cumsum(x, dim=0); x: f32[100000, 8]")
    point = COLUMN.default_point(p, SM90)
    assert point["split"] > 1   # 8 columns cannot fill the GPU without splitting the length
    source = COLUMN.render(p, SM90, point, "col").source
    assert "__shared__ Acc segment_totals[kSplit][kThreadsX];" in source


def test_fused_prologue_and_epilogue():
    p = problem("y = relu(cumsum(x * 2.0, dim=1)); x: f32[2048, 2048]")
    source = WARP.render(p, SM90, WARP.default_point(p, SM90), "fz").source
    assert "* 2.0f" in source and "fmaxf(" in source


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_sample_defaults_compile_without_spills(arch):
    rendered = [sketch.render(p, ARCHS[arch], sketch.default_point(p, ARCHS[arch]), f"sample{i}_{j}")
                for i, text in enumerate(scan.SAMPLE_INTENTS)
                for j, (sketch, p) in enumerate(serving(scan.SKETCHES, text, arch))]
    compile_clean(rendered, arch)


@needs_nvcc
@pytest.mark.parametrize("text", [
    "y = cumsum(x, dim=1); x: bf16[N, 100000]; N=5",
    "y = cumsum(x, dim=1); x: i32[1024, 333]",
    "y = cumsum(x, dim=1); x: f16[32, 5000, 64]",
])
def test_design_space_points_compile_without_spills(text):
    rendered = [sketch.render(p, SM90, point, f"pt{i}_{k}")
                for i, (sketch, p) in enumerate(serving(scan.SKETCHES, text))
                for k, point in enumerate(some_points(sketch, p, "sm_90"))]
    compile_clean(rendered, "sm_90")


@needs_emulator
@pytest.mark.parametrize("sketch, text, point", [
    (WARP, "y = cumsum(x, dim=1); x: f32[N, 1000]; N=5", {"items": 4, "warps": 2}),
    (WARP, "y = relu(cumsum(x * 2.0, dim=-1)); x: f16[4, 300]", None),
    (BLOCK, "y = cumsum(x, dim=1); x: i32[3, 333]", {"threads": 128, "items": 2}),
    (MULTI, "y = cumsum(x, dim=1); x: f32[B, L]; B=2; L=9001",
     {"threads": 128, "items": 2, "tile_chunks": 2}),
    (COLUMN, "y = cumsum(x, dim=0); x: f32[300, 40]", {"threads_x": 32, "split": 4}),
    (COLUMN, "y = cumsum(x, dim=1); x: f64[3, 130, 5]", {"threads_x": 32, "split": 1}),
    # cumprod through the same sketches
    (WARP, "y = cumprod(x, dim=1); x: f32[3, 200]", {"items": 4, "warps": 2}),
    (MULTI, "y = cumprod(x, dim=1); x: f64[2, 9001]", {"threads": 128, "items": 2, "tile_chunks": 2}),
    (COLUMN, "y = cumprod(x, dim=0); x: f32[100, 40]", {"threads_x": 32, "split": 4}),
    # scans from the end of a row: flip(scan(flip(x))) reads the row backwards
    (WARP, "y = flip(cumsum(flip(x, dims=[1]), dim=1), dims=[1]); x: f32[3, 200]", {"items": 4, "warps": 2}),
    (BLOCK, "y = flip(cumsum(flip(x * 2, dims=[1]), dim=1), dims=[1]); x: f32[3, 333]",
     {"threads": 128, "items": 2}),
    (MULTI, "y = flip(cumsum(flip(x, dims=[-1]), dim=-1), dims=[-1]); x: f32[2, 9000]",
     {"threads": 128, "items": 4, "tile_chunks": 2}),
    (BLOCK, "y = flip(cumprod(flip(x, dims=[1]), dim=1), dims=[1]); x: f32[3, 257]",
     {"threads": 128, "items": 1}),
    # one pass, tiles chained along the row: a partial last tile, idle warps past the row's end
    (CHAINED, "y = cumsum(x, dim=1); x: f32[B, L]; B=3; L=5000", {"threads": 128, "items": 4, "chunks": 2}),
    (CHAINED, "y = relu(cumsum(x * 2.0, dim=-1)); x: f16[2, 4500]",
     {"threads": 128, "items": 8, "chunks": 1}),
    (CHAINED, "y = cumsum(x, dim=1); x: i32[2, 4099]", {"threads": 128, "items": 2, "chunks": 4}),
    (CHAINED, "y = cumprod(x, dim=1); x: f64[2, 4200]", {"threads": 128, "items": 1, "chunks": 1}),
    (CHAINED, "y = flip(cumsum(flip(x, dims=[1]), dim=1), dims=[1]); x: f32[2, 4608]",
     {"threads": 128, "items": 4, "chunks": 1}),
], ids=["warp-vector", "warp-fused-half", "block-int-tail", "multi-block", "column-split", "column-f64",
        "cumprod-warp", "cumprod-multi", "cumprod-column", "reverse-warp-vector", "reverse-block-prologue",
        "reverse-multi-vector", "reverse-cumprod-block", "chained-vector-tail", "chained-fused-half",
        "chained-scalar-int", "chained-cumprod-f64", "chained-reverse-vector"])
def test_kernels_compute_the_reference_on_the_cpu_emulator(sketch, text, point, tmp_path):
    p = problem(text)
    assert_matches_reference(sketch, p, point or sketch.default_point(p, SM90), tmp_path)
