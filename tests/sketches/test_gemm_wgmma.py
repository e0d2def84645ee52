"""The Hopper wgmma GEMM sketch: what it serves, its design space and text, the swizzled
shared-memory addressing against the PTX canonical layouts, nvcc/ptxas resources for sm_90a,
and whole kernels on the CPU emulator (gemm_ptx_emu.h decodes the descriptors)."""
from __future__ import annotations

import shutil

import pytest
from cpu_emulation import assert_matches_reference, needs_emulator
from wgmma_emulation import WGMMA_STAND_INS, Emulated, c_eval

from dice_engine.arch import ARCHS
from dice_engine.compile import compile_cuda
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import Problem, classify
from dice_engine.sketches import gemm_wgmma, registry
from dice_engine.sketches.base import Point
from dice_engine.sketches.gemm_wgmma import (BK, DESCRIPTOR_LBO, DESCRIPTOR_SBO, DESCRIPTOR_START,
                                             SWIZZLED_OFFSET)

SKETCH = gemm_wgmma.SKETCHES[0]
H100 = ARCHS["sm_90"]
SQUARE_F16 = "C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")


def problem(text: str) -> Problem:
    return classify(parse_intent(text))


def point(bm: int, bn: int, warpgroups: int, stages: int) -> Point:
    return {"block_m": bm, "block_n": bn, "warpgroups": warpgroups, "stages": stages}


@pytest.fixture(autouse=True)
def private_compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DICE_CACHE_DIR", str(tmp_path / "cache"))


# -- what it serves ------------------------------------------------------------------------------

def test_serves_aligned_half_gemms_on_hopper_only():
    assert SKETCH.unsupported(problem(SQUARE_F16), H100) is None
    assert SKETCH.unsupported(problem("C = A.T @ B.T; A: bf16[64, 64]; B: bf16[64, 64]"), H100) is None
    assert "sm_90" in SKETCH.unsupported(problem(SQUARE_F16), ARCHS["sm_80"])
    assert "f32" in SKETCH.unsupported(problem("C = A @ B; A: f32[64, 64]; B: f32[64, 64]"), H100)
    odd = problem("C = A @ B; A: f16[1000, 999]; B: f16[999, 1000]")
    assert "(999)" in SKETCH.unsupported(odd, H100)
    symbolic_ld = problem("C = A.T @ B; A: f16[512, M]; B: f16[512, 256]; M=777")   # A.T's rows hold M
    assert "(M)" in SKETCH.unsupported(symbolic_ld, H100)
    # the registry falls back to mma.sync where wgmma cannot serve
    hand_written = [s.name for s in registry.candidates(odd, H100) if s.name != "generic.lowered"]
    assert hand_written == ["gemm.mma_sync"]
    assert "gemm.wgmma" in [s.name for s in registry.candidates(problem(SQUARE_F16), H100)]


@pytest.mark.parametrize("text", gemm_wgmma.SAMPLE_INTENTS)
def test_default_point_is_legal_and_renders_for_sm90a(text):
    p = problem(text)
    if SKETCH.unsupported(p, H100):
        assert "999" in text
        return
    chosen = SKETCH.default_point(p, H100)
    assert SKETCH.space(p, H100).is_legal(chosen)
    rendered = SKETCH.render(p, H100, chosen, "wg_sample")
    assert rendered.arch_suffix == "a" and rendered.compile_arch("sm_90") == "sm_90a"
    assert rendered.launches[0].threads == 128 * chosen["warpgroups"]
    assert rendered.launches[0].smem_bytes <= H100.smem_per_block_optin


def test_big_problem_default_and_illegal_points():
    p = problem(SQUARE_F16)
    assert SKETCH.default_point(p, H100) == point(128, 256, 2, 4)
    space = SKETCH.space(p, H100)
    assert "accumulator registers" in "; ".join(space.violations(point(256, 256, 2, 3)))
    assert "rows per warpgroup" in "; ".join(space.violations(point(64, 128, 2, 3)))
    assert "shared memory" in "; ".join(space.violations(point(256, 128, 2, 5)))
    with pytest.raises(ValueError, match="illegal point"):
        SKETCH.render(p, H100, point(64, 128, 2, 3), "bad")


def test_text_claims_match_the_code():
    rendered = SKETCH.render(problem(SQUARE_F16), H100, point(128, 256, 2, 4), "wg_text")
    src = rendered.source
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in src
    assert "TRANS_A = 0, TRANS_B = 1" in src    # row-major B is N-major: transposed descriptor
    assert "wgmma.fence.sync.aligned" in src and "wgmma.commit_group" in src and "wgmma_wait<1>()" in src
    assert "fence.proxy.async.shared::cta" in src and "cp.async.cg.shared.global" in src
    assert "(uint64_t(1) << 62)" in src        # 128-byte swizzle descriptors
    assert "cudaFuncAttributeMaxDynamicSharedMemorySize, 197632" in rendered.launcher
    assert "build for sm_90a" in src.splitlines()[0]
    bf16 = problem("y = gelu(x @ W.T + b); x: bf16[512, 256]; W: bf16[512, 256]; b: bf16[512]")
    src = SKETCH.render(bf16, H100, SKETCH.default_point(bf16, H100), "wg_bf16").source
    assert ".f32.bf16.bf16" in src and "TRANS_A = 0, TRANS_B = 0" in src
    assert "__floats2bfloat162_rn(epilogue(" in src


# -- addressing: the swizzled stores against the PTX canonical layouts ----------------------------

def swizzle(address: int) -> int:
    return address ^ (((address >> 7) & 7) << 4)


def canonical_address(major: str, start: int, lbo: int, sbo: int, mn: int, k: int) -> int:
    """Byte address wgmma reads element (mn, k) of a 16-bit operand from (128-byte swizzle):
    the PTX ISA's canonical layouts, written independently of the sketch."""
    if major == "K":      # 8-row groups of 128-byte rows, k contiguous
        return swizzle(start + (mn // 8) * sbo + (mn % 8) * 128 + 2 * k)
    return swizzle(start + (mn // 64) * lbo + (k // 8) * sbo + (k % 8) * 128 + 2 * (mn % 64))


@pytest.mark.parametrize("major,mn_extent", [("K", 64), ("K", 256), ("MN", 64), ("MN", 128), ("MN", 256)])
def test_every_element_is_read_where_the_copies_stored_it(major, mn_extent):
    # the tile as the copies fill it: rows along the outer index, 16-byte chunks along the inner one
    rows, inner = (mn_extent, BK) if major == "K" else (BK, mn_extent)
    stored: dict[int, tuple[int, int]] = {}      # byte address → (mn, k) of the element there
    for row in range(rows):
        for chunk in range(inner // 8):
            base = c_eval(SWIZZLED_OFFSET, row=row, chunk=chunk, rows=rows)
            assert base % 16 == 0
            for e in range(8):
                mn, k = (row, chunk * 8 + e) if major == "K" else (chunk * 8 + e, row)
                assert base + 2 * e not in stored, "two chunks overlap"
                stored[base + 2 * e] = (mn, k)
    assert sorted(stored) == list(range(0, rows * inner * 2, 2))      # dense: exactly the tile's bytes
    consts = {"BK": BK}
    lbo, sbo = c_eval(DESCRIPTOR_LBO[major], **consts), c_eval(DESCRIPTOR_SBO)
    assert lbo % 16 == 0 and sbo % 16 == 0 and lbo >> 4 < 1 << 14
    wgmma_n = 64 if major == "K" and mn_extent > 64 else mn_extent    # an A block reads 64 rows at a time
    for kk in range(BK // 16):
        for mn0 in range(0, mn_extent, wgmma_n):
            start = c_eval(DESCRIPTOR_START[major], mn0=mn0, kk=kk, **consts)
            assert (start >> 7) & 7 == 0, "the start must not sit inside a swizzle atom (base offset 0)"
            for mn in range(wgmma_n):
                for k in range(16):
                    address = canonical_address(major, start, lbo, sbo, mn, k)
                    assert stored[address] == (mn0 + mn, kk * 16 + k), (kk, mn0, mn, k)


def test_the_copies_of_a_warp_hit_every_bank_group_once_per_eight_chunks():
    """Eight consecutive chunks of one row, or one chunk column of eight rows, cover all eight
    16-byte bank groups of a 128-byte line (the point of the swizzle for MN-major reads)."""
    for rows in (64, 128, 256):
        for row in range(8):
            groups = {c_eval(SWIZZLED_OFFSET, row=row, chunk=c, rows=rows) // 16 % 8 for c in range(8)}
            assert len(groups) == 8
        for chunk in range(8):
            groups = {c_eval(SWIZZLED_OFFSET, row=r, chunk=chunk, rows=rows) // 16 % 8 for r in range(8)}
            assert len(groups) == 8


def test_rendered_kernel_uses_the_tables():
    col_col = "C = A.T @ W.T; A: f16[256, 512]; W: f16[256, 256]"
    for text, a_major, b_major in [(SQUARE_F16, "K", "MN"), (col_col, "MN", "K")]:
        src = SKETCH.render(problem(text), H100, point(128, 128, 2, 4), "wg_tables").source
        assert f"return {SWIZZLED_OFFSET};" in src
        assert f"descriptor(a_tile + {DESCRIPTOR_START[a_major]}, A_LBO, SBO)" in src
        assert f"descriptor(b_tile + {DESCRIPTOR_START[b_major]}, B_LBO, SBO)" in src
        assert f"A_LBO = {DESCRIPTOR_LBO[a_major]}, B_LBO = {DESCRIPTOR_LBO[b_major]}" in src
        # accumulator fragment rows: 16 per warp, lane/4 and +8 (PTX wgmma m64nNk16 f32 D layout)
        assert "warp * 16 + lane / 4 + upper * 8" in src and "ni * 8 + (lane % 4) * 2" in src


# -- nvcc/ptxas ----------------------------------------------------------------------------------

COMPILE_CASES = [
    (SQUARE_F16, None),
    (gemm_wgmma.SAMPLE_INTENTS[1], point(128, 128, 2, 5)),            # bf16, row/row
    (gemm_wgmma.SAMPLE_INTENTS[6], point(64, 64, 1, 3)),              # col/col, odd tails
    (gemm_wgmma.SAMPLE_INTENTS[8], None),                             # bias + gelu, bf16 out
    (SQUARE_F16, point(256, 128, 2, 4)),                              # two m64 steps per warpgroup
] + [(SQUARE_F16, corner) for corner in (SKETCH.space(problem(SQUARE_F16), H100).corners()[0],
                                         SKETCH.space(problem(SQUARE_F16), H100).corners()[-1])]


@needs_nvcc
@pytest.mark.parametrize("text,chosen", COMPILE_CASES)
def test_compiles_for_sm90a_without_spills_or_warnings(text, chosen):
    p = problem(text)
    rendered = SKETCH.render(p, H100, chosen or SKETCH.default_point(p, H100), "wg_compile")
    result = compile_cuda(rendered.source, rendered.compile_arch("sm_90"), output="shared")
    assert result.ok, result.first_error() + "\n" + result.log[-3000:]
    assert not result.messages, result.messages
    if chosen is None:   # defaults keep the wgmma pipeline (ptxas notes serialized, still correct, ones)
        assert "Potential Performance Loss" not in result.log
    resources = result.kernel(rendered.kernel_names[0])
    assert resources is not None, result.resources
    assert resources.spill_bytes == 0 and resources.stack_bytes == 0, (rendered.tokens, resources)


# -- CPU emulation -------------------------------------------------------------------------------

_STAND_INS = """using gemm_emu::smem_addr;
using gemm_emu::cp_async_16;
using gemm_emu::cp_async_commit;
using gemm_emu::cp_async_wait;
inline void fence_proxy_async() {}
""" + WGMMA_STAND_INS


EMULATED_CASES = [   # (K-major A, N-major B, tails); (M-major A, K-major B); (batched, epilogue, N = 256);
                     # (two m64 steps per warpgroup)
    ("C = A @ B; A: f16[M, 200]; B: f16[200, 136]; M=130", point(128, 128, 2, 3)),
    ("C = A.T @ B.T; A: bf16[72, 80]; B: bf16[64, 72]", point(64, 64, 1, 4)),
    ("y = gelu(A @ W.T + b) * 0.5; A: f16[2, 40, 136]; W: f16[264, 136]; b: f16[264]", point(64, 256, 1, 3)),
    ("C = A.T @ B; A: bf16[48, 136]; B: bf16[48, 200]", point(256, 64, 2, 5)),
]


@needs_emulator
@pytest.mark.parametrize("text,chosen", EMULATED_CASES, ids=["row-row-symbolic-m", "col-col-bf16",
                                                             "batched-epilogue-n256", "col-row-two-m64"])
def test_kernels_compute_the_reference_on_the_cpu_emulator(text, chosen, tmp_path):
    p = problem(text)
    if SKETCH.unsupported(p, H100):
        pytest.fail(SKETCH.unsupported(p, H100))
    assert_matches_reference(Emulated(SKETCH, _STAND_INS), p, chosen, tmp_path)
