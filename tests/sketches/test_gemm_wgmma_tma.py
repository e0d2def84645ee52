"""The TMA + warp-specialized wgmma GEMM sketch: what it serves, its design space and text, the
TMA boxes against the shared-memory layout the descriptors read, nvcc/ptxas resources for
sm_90a, and whole kernels on the CPU emulator (gemm_ptx_emu.h emulates the mbarriers, the
tensor-map encoding and the TMA's swizzled, zero-filled box copies from the PTX ISA and the
driver API's descriptions; its device reports 3 SMs, so persistent blocks loop over tiles)."""
from __future__ import annotations

import shutil

import pytest
from cpu_emulation import assert_matches_reference, needs_emulator
from wgmma_emulation import WGMMA_STAND_INS, Emulated, c_eval

from dice_engine.arch import ARCHS
from dice_engine.compile import compile_cuda
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import Problem, classify
from dice_engine.sketches import gemm_wgmma_tma, registry
from dice_engine.sketches.base import Point
from dice_engine.sketches.gemm_wgmma import BK, DESCRIPTOR_START, SWIZZLED_OFFSET

SKETCH = gemm_wgmma_tma.SKETCHES[0]
H100 = ARCHS["sm_90"]
SQUARE_F16 = "C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")


def problem(text: str) -> Problem:
    return classify(parse_intent(text))


def point(bm: int, bn: int, consumers: int, stages: int, persistent: int = 1, pingpong: int = 0) -> Point:
    return {"block_m": bm, "block_n": bn, "consumers": consumers, "stages": stages, "persistent": persistent,
            "pingpong": pingpong}


@pytest.fixture(autouse=True)
def private_compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DICE_CACHE_DIR", str(tmp_path / "cache"))


# -- what it serves and its space -----------------------------------------------------------------

def test_serves_what_the_cp_async_wgmma_kernel_serves():
    assert SKETCH.unsupported(problem(SQUARE_F16), H100) is None
    assert "sm_90" in SKETCH.unsupported(problem(SQUARE_F16), ARCHS["sm_80"])
    assert "f32" in SKETCH.unsupported(problem("C = A @ B; A: f32[64, 64]; B: f32[64, 64]"), H100)
    assert "(999)" in SKETCH.unsupported(problem("C = A @ B; A: f16[1000, 999]; B: f16[999, 1000]"), H100)
    names = [s.name for s in registry.candidates(problem(SQUARE_F16), H100)]
    assert "gemm.wgmma_tma" in names and "gemm.wgmma" in names


@pytest.mark.parametrize("text", gemm_wgmma_tma.SAMPLE_INTENTS)
def test_default_point_is_legal_and_renders_for_sm90a(text):
    p = problem(text)
    chosen = SKETCH.default_point(p, H100)
    assert SKETCH.space(p, H100).is_legal(chosen)
    rendered = SKETCH.render(p, H100, chosen, "tma_sample")
    assert rendered.arch_suffix == "a" and rendered.compile_arch("sm_90") == "sm_90a"
    assert rendered.launches[0].threads == 128 * (chosen["consumers"] + 1)   # + the producer warpgroup
    assert rendered.launches[0].smem_bytes <= H100.smem_per_block_optin


def test_big_problem_default_grid_and_illegal_points():
    p = problem(SQUARE_F16)
    assert SKETCH.default_point(p, H100) == point(128, 256, 2, 4)
    assert SKETCH.render(p, H100, point(128, 256, 2, 4), "grid").launches[0].grid == (H100.sms, 1, 1)
    assert SKETCH.render(p, H100, point(128, 256, 2, 4, 0), "grid").launches[0].grid == (32 * 16, 1, 1)
    space = SKETCH.space(p, H100)
    assert "accumulator registers" in "; ".join(space.violations(point(256, 256, 2, 3)))
    assert "rows per consumer warpgroup" in "; ".join(space.violations(point(64, 128, 2, 3)))
    assert "shared memory" in "; ".join(space.violations(point(128, 256, 2, 5)))
    assert "pingpong needs" in "; ".join(space.violations(point(128, 128, 2, 4, 0, 1)))
    assert "pingpong needs" in "; ".join(space.violations(point(128, 128, 1, 4, 1, 1)))
    assert "accumulator registers" in "; ".join(space.violations(point(128, 256, 2, 4, 1, 1)))


def test_stores_are_16_bytes_a_lane_where_rows_allow():
    quad = SKETCH.render(problem(SQUARE_F16), H100, point(128, 256, 2, 4), "quad").source
    assert "__shfl_sync" in quad and "*reinterpret_cast<uint4*>(&C_b[" in quad
    odd = problem("C = A @ W.T; A: f16[256, 64]; W: f16[100, 64]")    # N = 100: rows not 16-byte multiples
    pairs = SKETCH.render(odd, H100, point(64, 128, 1, 3), "pairs").source
    assert "__shfl_sync" not in pairs and "uint4" not in pairs


def test_text_claims_match_the_code():
    rendered = SKETCH.render(problem(SQUARE_F16), H100, point(128, 256, 2, 4), "tma_text")
    src = rendered.source
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in src
    assert "TRANS_A = 0, TRANS_B = 1" in src    # row-major B is N-major
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in src
    assert "mbarrier.arrive.expect_tx" in src and "mbarrier.try_wait.parity" in src
    assert "cp.async.cg" not in src and "__syncthreads();" in src.split("if (threadIdx.x < 128)")[0]
    assert src.count("__syncthreads()") == 1    # only after the barriers are set up: none in the main loop
    # A (K-major) is one box of the tile's rows; B (N-major) four 64-column panels of BK k-rows
    launcher = rendered.launcher
    assert "encode_tile_map(&a_map, A, 2, (unsigned long long)(4096), (unsigned long long)(4096), " \
           "(unsigned long long)(1), 64, BM)" in launcher
    assert "encode_tile_map(&b_map, B, 2, (unsigned long long)(4096), (unsigned long long)(4096), " \
           "(unsigned long long)(1), 64, 64)" in launcher
    assert "for (int panel = 0; panel < BN / 64; ++panel)" in src
    assert "cudaDevAttrMultiProcessorCount" in launcher and "(tiles < sms ? tiles : sms)" in launcher
    batched = SKETCH.render(problem("C = A @ B; A: f16[8, 256, 128]; B: f16[128, 256]"), H100,
                            point(128, 128, 2, 4, 0), "tma_batched")
    assert "tma_load_3d(a_tile" in batched.source and "tma_load_2d(b_tile" in batched.source   # B is shared
    assert "encode_tile_map(&a_map, A, 3," in batched.launcher and "<<<tiles, 384," in batched.launcher


def test_tma_boxes_land_where_the_descriptors_read():
    """A box of 64 contiguous elements by `rows` rows, written in the 128-byte swizzle from a
    1024-byte-aligned address, puts element (row, e) at chunk e/8 ^ row%8 of 128-byte row `row`:
    the layout the cp.async kernel builds and its descriptors read (SWIZZLED_OFFSET). For an
    M/N-major operand the boxes are 64-wide panels of BK rows placed BK*128 bytes apart."""
    def tma_byte(row: int, e: int) -> int:
        byte = row * 128 + 2 * e
        return byte ^ (((byte >> 7) & 7) << 4)

    for rows in (64, 128, 256):   # K-major tile: one box of `rows` rows
        for row in range(rows):
            for e in range(BK):
                expected = c_eval(SWIZZLED_OFFSET, row=row, chunk=e // 8, rows=rows) + 2 * (e % 8)
                assert tma_byte(row, e) == expected
    for extent in (64, 128, 256):   # MN-major tile: rows are k, panel p holds columns 64p..64p+63
        for k in range(BK):
            for mn in range(extent):
                panel_start = (mn // 64) * BK * 128
                assert panel_start + tma_byte(k, mn % 64) == \
                    c_eval(SWIZZLED_OFFSET, row=k, chunk=mn // 8, rows=BK) + 2 * (mn % 8)
    assert "(mn0 / 64) * (BK * 128)" in DESCRIPTOR_START["MN"]


# -- nvcc/ptxas ----------------------------------------------------------------------------------

COMPILE_CASES = [
    (SQUARE_F16, None),
    (SQUARE_F16, point(128, 256, 2, 4, 0)),
    (SQUARE_F16, point(256, 128, 2, 4)),                                  # two m64 steps per warpgroup
    (SQUARE_F16, point(128, 128, 2, 6, 1, 1)),                            # pingpong
    (gemm_wgmma_tma.SAMPLE_INTENTS[2], None),                            # batched operands: rank-3 maps
    (gemm_wgmma_tma.SAMPLE_INTENTS[5], point(64, 64, 1, 3)),              # col/col, tails
    (gemm_wgmma_tma.SAMPLE_INTENTS[7], None),                             # bias + gelu, bf16 out
]


@needs_nvcc
@pytest.mark.parametrize("text,chosen", COMPILE_CASES)
def test_compiles_for_sm90a_without_spills_or_warnings(text, chosen):
    p = problem(text)
    rendered = SKETCH.render(p, H100, chosen or SKETCH.default_point(p, H100), "tma_compile")
    result = compile_cuda(rendered.source, rendered.compile_arch("sm_90"), output="shared")
    assert result.ok, result.first_error() + "\n" + result.log[-3000:]
    assert not result.messages, result.messages
    assert "Potential Performance Loss" not in result.log
    resources = result.kernel(rendered.kernel_names[0])
    assert resources is not None, result.resources
    assert resources.spill_bytes == 0 and resources.stack_bytes == 0, (rendered.tokens, resources)


# -- CPU emulation -------------------------------------------------------------------------------

_STAND_INS = """using gemm_emu::smem_addr;
using gemm_emu::mbar_init;
using gemm_emu::mbar_arrive_expect_tx;
using gemm_emu::mbar_arrive;
using gemm_emu::mbar_wait;
inline void fence_barrier_init() {}
inline void tma_load_2d(uint32_t dst, const TmaMap* map, int c0, int c1, uint64_t* bar) {
    gemm_emu::tma_load(dst, map, c0, c1, 0, bar);
}
inline void tma_load_3d(uint32_t dst, const TmaMap* map, int c0, int c1, int c2, uint64_t* bar) {
    gemm_emu::tma_load(dst, map, c0, c1, c2, bar);
}
""" + WGMMA_STAND_INS


EMULATED_CASES = [
    # K-major A, N-major B, M and N tails, a K tail (200 = 3 slices + 8), persistent over 6 tiles on 3 SMs
    ("C = A @ B; A: f16[M, 200]; B: f16[200, 136]; M=130", point(64, 64, 1, 3)),
    # M-major A, K-major B (both via the transpose), bf16, one tile per block
    ("C = A.T @ B.T; A: bf16[72, 80]; B: bf16[64, 72]", point(64, 64, 1, 4, 0)),
    # batched A and epilogue input, a shared B, two consumers, more ring slices than stages
    ("y = relu(A @ B + R) * 0.5; A: f16[3, 72, 200]; B: f16[200, 72]; R: f16[3, 72, 72]",
     point(128, 64, 2, 3)),
    # two m64 steps per consumer, M-major A and N-major B (panels), K tail
    ("C = A.T @ B; A: bf16[136, 256]; B: bf16[136, 128]", point(256, 128, 2, 3)),
    # pingpong: 2 x 3 x 2 = 12 tiles on 3 SMs, each consumer two tiles of a block, batched epilogue input
    ("y = A @ B + R; A: f16[2, 130, 136]; B: f16[2, 136, 192]; R: f16[2, 130, 192]",
     point(128, 64, 2, 3, 1, 1)),
    # N = 100 is no multiple of 8: pair stores instead of the quad shuffles, with an epilogue
    ("y = tanh(A @ W.T); A: bf16[70, 64]; W: bf16[100, 64]", point(64, 128, 1, 3)),
]


@needs_emulator
@pytest.mark.parametrize("text,chosen", EMULATED_CASES, ids=["row-row-tails-persistent", "col-col-bf16",
                                                             "batched-epilogue-two-consumers",
                                                             "col-row-two-m64", "pingpong", "pair-stores"])
def test_kernels_compute_the_reference_on_the_cpu_emulator(text, chosen, tmp_path):
    p = problem(text)
    if SKETCH.unsupported(p, H100):
        pytest.fail(SKETCH.unsupported(p, H100))
    assert SKETCH.space(p, H100).is_legal(chosen), SKETCH.space(p, H100).violations(chosen)
    assert_matches_reference(Emulated(SKETCH, _STAND_INS), p, chosen, tmp_path)
