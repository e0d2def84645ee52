"""The tensor-core GEMM sketch: design space, rendered text, and nvcc/ptxas resources."""
from __future__ import annotations

import random
import shutil

import pytest

from dice_engine.arch import ARCHS
from dice_engine.compile import compile_cuda
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import Problem, classify
from dice_engine.sketches import gemm_tc

SKETCH = gemm_tc.SKETCHES[0]
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
SQUARE_F16 = "C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]"
ODD_F16 = "C = A.T @ B.T; A: f16[999, 1000]; B: f16[1001, 999]"   # K = 999: scalar loads only


def problem(text: str) -> Problem:
    return classify(parse_intent(text))


def point(bm: int, bn: int, bk: int, wm: int, wn: int, *, stages: int, load: str) -> dict:
    return {"block_m": bm, "block_n": bn, "block_k": bk, "warp_m": wm, "warp_n": wn, "stages": stages,
            "load": load}


@pytest.fixture(autouse=True)
def private_compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DICE_CACHE_DIR", str(tmp_path / "cache"))


def test_serves_half_types_where_the_mma_exists():
    f16, bf16 = problem("C = A @ B; A: f16[64, 64]; B: f16[64, 64]"), problem(
        "C = A @ B; A: bf16[64, 64]; B: bf16[64, 64]")
    assert SKETCH.unsupported(f16, ARCHS["sm_75"]) is None
    assert SKETCH.unsupported(bf16, ARCHS["sm_80"]) is None
    assert "sm_80" in SKETCH.unsupported(bf16, ARCHS["sm_75"])
    assert "f32" in SKETCH.unsupported(problem("C = A @ B; A: f32[64, 64]; B: f32[64, 64]"), ARCHS["sm_90"])


def test_accumulating_in_half_is_refused():
    p = problem("C = A @ B; A: f16[64, 64]; B: f16[64, 64]; accumulate=f16")
    assert "accumulate=f16" in SKETCH.unsupported(p, ARCHS["sm_90"])


@pytest.mark.parametrize("text", gemm_tc.SAMPLE_INTENTS)
@pytest.mark.parametrize("arch_name", ["sm_75", "sm_80", "sm_90"])
def test_default_point_is_legal_and_renders(text, arch_name):
    p, arch = problem(text), ARCHS[arch_name]
    if SKETCH.unsupported(p, arch):
        assert "bf16" in text and arch_name == "sm_75"
        return
    chosen = SKETCH.default_point(p, arch)
    assert SKETCH.space(p, arch).is_legal(chosen)
    rendered = SKETCH.render(p, arch, chosen, "tc_sample")
    assert ("cp.async.cg.shared.global" in rendered.source) == (chosen["load"] == "cp_async")
    assert rendered.launches[0].smem_bytes <= arch.smem_per_block_optin


def test_big_problem_default_is_a_deep_cp_async_pipeline():
    p, arch = problem(SQUARE_F16), ARCHS["sm_90"]
    assert SKETCH.default_point(p, arch) == point(128, 256, 64, 64, 64, stages=3, load="cp_async")


def test_constraints_reject_illegal_points():
    arch = ARCHS["sm_90"]
    square = SKETCH.space(problem(SQUARE_F16), arch)
    def why(*args: int, **kw: object) -> str:
        return "; ".join(square.violations(point(*args, **kw)))

    assert "exactly 2" in why(128, 128, 32, 64, 64, stages=3, load="vector")
    assert "shared memory" in why(256, 256, 64, 64, 64, stages=4, load="cp_async")
    assert "registers" in why(128, 128, 64, 64, 64, stages=2, load="scalar")
    assert "registers" in why(256, 256, 32, 64, 64, stages=3, load="cp_async")   # 512 threads: 120 each
    assert "threads" in why(256, 256, 32, 32, 32, stages=2, load="cp_async")
    odd = SKETCH.space(problem(ODD_F16), arch)
    assert any("leading dimension (999)" in v
               for v in odd.violations(point(64, 64, 32, 32, 32, stages=3, load="cp_async")))
    assert odd.is_legal(point(64, 64, 32, 32, 32, stages=2, load="scalar"))
    assert "cp_async" not in SKETCH.space(problem(SQUARE_F16), ARCHS["sm_75"]).token("load").choices
    with pytest.raises(ValueError, match="illegal point"):
        SKETCH.render(problem(ODD_F16), arch, point(64, 64, 32, 32, 32, stages=3, load="cp_async"), "bad")


def test_text_claims_match_the_code():
    p, arch = problem(SQUARE_F16), ARCHS["sm_90"]
    rendered = SKETCH.render(p, arch, SKETCH.default_point(p, arch), "tc_text")
    src = rendered.source
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in src
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in src and "ldmatrix_x4_trans(r" in src
    assert "cp.async.cg.shared.global" in src and "cp_async_wait<STAGES - 2>()" in src
    assert "cudaFuncAttributeMaxDynamicSharedMemorySize, 156672" in rendered.launcher
    assert "__floats2half2_rn" in src
    staged = SKETCH.render(p, arch, point(128, 128, 32, 64, 32, stages=2, load="vector"), "tc_vec").source
    assert "cp.async" not in staged and "reinterpret_cast<const uint4*>" in staged
    bf16 = problem("y = gelu(x @ W + b); x: bf16[512, 256]; W: bf16[256, 512]; b: bf16[512]")
    src = SKETCH.render(bf16, ARCHS["sm_80"], SKETCH.default_point(bf16, ARCHS["sm_80"]), "tc_bf16").source
    assert "f32.bf16.bf16.f32" in src and "__floats2bfloat162_rn(epilogue(" in src


def test_odd_output_width_stores_elementwise():
    p, arch = problem(ODD_F16), ARCHS["sm_80"]
    src = SKETCH.render(p, arch, SKETCH.default_point(p, arch), "tc_odd").source
    assert "if (col + 1 < N) C_b[" in src and "__half2*" not in src


def _sampled_points(text: str, arch_name: str, count: int, seed: int) -> list[dict]:
    legal = list(SKETCH.space(problem(text), ARCHS[arch_name]).points())
    return random.Random(seed).sample(legal, count)


COMPILE_CASES = (
    [(text, "sm_90", None) for text in gemm_tc.SAMPLE_INTENTS[:2] + gemm_tc.SAMPLE_INTENTS[4:9]]
    + [(text, "sm_80", None) for text in (gemm_tc.SAMPLE_INTENTS[2], gemm_tc.SAMPLE_INTENTS[9], ODD_F16)]
    + [(SQUARE_F16, "sm_75", None), (ODD_F16, "sm_75", None)]
    + [(SQUARE_F16, "sm_90", c) for c in (SKETCH.space(problem(SQUARE_F16), ARCHS["sm_90"]).corners()[0],
                                         SKETCH.space(problem(SQUARE_F16), ARCHS["sm_90"]).corners()[-1])]
    + [(SQUARE_F16, "sm_80", c) for c in _sampled_points(SQUARE_F16, "sm_80", 3, seed=7)]
    + [(ODD_F16, "sm_90", c) for c in _sampled_points(ODD_F16, "sm_90", 1, seed=7)]
)


@needs_nvcc
@pytest.mark.parametrize("text,arch_name,chosen", COMPILE_CASES)
def test_compiles_without_spills(text, arch_name, chosen):
    p, arch = problem(text), ARCHS[arch_name]
    rendered = SKETCH.render(p, arch, chosen or SKETCH.default_point(p, arch), "tc_compile")
    result = compile_cuda(rendered.source, arch_name)
    assert result.ok, result.first_error() + "\n" + result.log[-3000:]
    resources = result.kernel(rendered.kernel_names[0])
    assert resources is not None, result.resources
    assert resources.spill_bytes == 0 and resources.stack_bytes == 0, (rendered.tokens, resources)
