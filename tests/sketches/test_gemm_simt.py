"""The CUDA-core GEMM sketch: design space, rendered text, and nvcc/ptxas resources."""
from __future__ import annotations

import re
import shutil

import pytest

from dice_engine.analysis import check_source
from dice_engine.arch import ARCHS
from dice_engine.compile import compile_cuda
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import Problem, classify
from dice_engine.sketches import gemm

SKETCH = gemm.SKETCHES[0]
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")


def point(bm: int, bn: int, bk: int, tm: int, tn: int, *, vector: int, buffering: int,
          k_splits: int = 1) -> dict:
    return {"block_m": bm, "block_n": bn, "block_k": bk, "thread_m": tm, "thread_n": tn, "vector": vector,
            "buffering": buffering, "k_splits": k_splits}


def problem(text: str) -> Problem:
    return classify(parse_intent(text))


@pytest.fixture(autouse=True)
def private_compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DICE_CACHE_DIR", str(tmp_path / "cache"))


def compile_clean(source: str, kernel: str, arch: str) -> None:
    result = compile_cuda(source, arch)
    assert result.ok, result.first_error() + "\n" + result.log[-3000:]
    resources = result.kernel(kernel)
    assert resources is not None, result.resources
    assert resources.spill_bytes == 0 and resources.stack_bytes == 0, resources
    assert resources.registers <= 255


def test_serves_f32_and_f64_only():
    arch = ARCHS["sm_90"]
    assert SKETCH.unsupported(problem("C = A @ B; A: f32[64, 64]; B: f32[64, 64]"), arch) is None
    assert SKETCH.unsupported(problem("C = A @ B; A: f64[64, 64]; B: f64[64, 64]"), arch) is None
    why = SKETCH.unsupported(problem("C = A @ B; A: f16[64, 64]; B: f16[64, 64]"), arch)
    assert why and "tensor cores" in why


@pytest.mark.parametrize("text", gemm.SAMPLE_INTENTS)
def test_default_point_is_legal_and_renders(text):
    p, arch = problem(text), ARCHS["sm_90"]
    point = SKETCH.default_point(p, arch)
    assert SKETCH.space(p, arch).is_legal(point)
    rendered = SKETCH.render(p, arch, point, "simt_sample")
    header = rendered.source.splitlines()[1]
    assert header.startswith("// design tokens:") and all(f"{k}={v}" in header for k, v in point.items())
    assert 'extern "C" void simt_sample_launch(' in rendered.launcher
    assert rendered.launches[0].threads == (point["block_m"] // point["thread_m"]) * (
        point["block_n"] // point["thread_n"])


def test_large_aligned_problem_gets_the_big_vectorized_tile():
    p, arch = problem(gemm.SAMPLE_INTENTS[0]), ARCHS["sm_90"]
    assert SKETCH.default_point(p, arch) == {"block_m": 128, "block_n": 128, "block_k": 8, "thread_m": 8,
                                             "thread_n": 8, "vector": 4, "buffering": 2, "k_splits": 1}


def test_vector_loads_need_aligned_leading_dimensions():
    arch = ARCHS["sm_90"]
    point = {"block_m": 128, "block_n": 128, "block_k": 8, "thread_m": 8, "thread_n": 8, "vector": 4,
             "buffering": 2, "k_splits": 1}
    odd_k = problem("C = A @ B; A: f32[1000, 999]; B: f32[999, 1000]")
    assert any("leading dimension (999)" in v for v in SKETCH.space(odd_k, arch).violations(point))
    symbolic_ld = problem("C = A.T @ B; A: f32[512, M]; B: f32[512, 256]; M=777")   # A.T's rows hold M
    assert not SKETCH.space(symbolic_ld, arch).is_legal(point)
    assert SKETCH.space(symbolic_ld, arch).is_legal({**point, "vector": 1})
    with pytest.raises(ValueError, match="illegal point"):
        SKETCH.render(odd_k, arch, point, "bad")


def test_thread_count_and_tile_split_constraints():
    space = SKETCH.space(problem("C = A @ B; A: f32[512, 512]; B: f32[512, 512]"), ARCHS["sm_80"])
    too_many = {"block_m": 128, "block_n": 128, "block_k": 8, "thread_m": 4, "thread_n": 4, "vector": 1,
                "buffering": 2, "k_splits": 1}
    assert any("1024 threads" in v for v in space.violations(too_many))
    uneven = {"block_m": 64, "block_n": 64, "block_k": 8, "thread_m": 4, "thread_n": 4, "vector": 4,
              "buffering": 1, "k_splits": 1}
    assert any("does not split" in v for v in space.violations(uneven))
    many_loads = {"block_m": 64, "block_n": 128, "block_k": 16, "thread_m": 8, "thread_n": 4, "vector": 1,
                  "buffering": 1, "k_splits": 1}
    assert any("12 global loads per thread" in v for v in space.violations(many_loads))


def test_text_shows_transposed_a_tile_float4_and_double_buffering():
    p, arch = problem(gemm.SAMPLE_INTENTS[0]), ARCHS["sm_90"]
    point = SKETCH.default_point(p, arch)
    source = SKETCH.render(p, arch, point, "simt_text").source
    assert "As[buf][k + 3][m] = a_stage[i].w;" in source           # row-major A stored transposed
    assert "reinterpret_cast<const float4*>(B_b" in source          # 16-byte global loads
    assert "reinterpret_cast<const float4*>(&As[buf][k]" in source  # 16-byte smem fragment reads
    assert "store_tiles(buf ^ 1)" in source
    single = SKETCH.render(p, arch, {**point, "buffering": 1, "k_splits": 1}, "simt_text1").source
    assert "buf ^ 1" not in single and "STAGES = 1" in single


def test_symbolic_rows_guard_the_launch():
    p, arch = problem("C = A @ B; A: f32[M, 512]; B: f32[512, 256]; M=777"), ARCHS["sm_90"]
    rendered = SKETCH.render(p, arch, SKETCH.default_point(p, arch), "simt_sym")
    assert "long long M" in rendered.launcher and "if (M <= 0) return;" in rendered.launcher
    assert "(int)(M), (int)(256), (int)(512)" in rendered.launcher


COMPILE_CASES = [(text, "sm_90", None) for text in gemm.SAMPLE_INTENTS] + [
    ("C = A @ W.T; A: f32[1000, 999]; W: f32[1001, 999]", "sm_80",
     point(64, 128, 8, 8, 4, vector=1, buffering=1)),
    ("C = A.T @ B; A: f32[512, 1024]; B: f32[512, 256]", "sm_80",
     point(128, 64, 16, 4, 8, vector=4, buffering=2)),
    ("C = A @ B; A: f64[1024, 1024]; B: f64[1024, 1024]", "sm_80",
     point(128, 128, 8, 8, 8, vector=2, buffering=2)),
]


@needs_nvcc
@pytest.mark.parametrize("text,arch_name,chosen", COMPILE_CASES)
def test_compiles_without_spills(text, arch_name, chosen):
    p, arch = problem(text), ARCHS[arch_name]
    rendered = SKETCH.render(p, arch, chosen or SKETCH.default_point(p, arch), "simt_compile")
    compile_clean(rendered.source, rendered.kernel_names[0], arch_name)


@pytest.mark.parametrize("chosen", [point(128, 128, 8, 8, 8, vector=4, buffering=2),
                                    point(128, 64, 16, 4, 8, vector=4, buffering=2),
                                    point(64, 128, 8, 8, 4, vector=1, buffering=1)])
def test_warps_are_4x8_thread_patches_reading_one_wavefront_per_fragment(chosen):
    p, arch = problem("C = A @ B; A: f32[512, 512]; B: f32[512, 512]"), ARCHS["sm_90"]
    source = SKETCH.render(p, arch, chosen, "simt_warps").source
    match = re.search(r"const int tx = (.+), ty = (.+);", source)
    assert match is not None
    threads_x, threads_y = chosen["block_n"] // chosen["thread_n"], chosen["block_m"] // chosen["thread_m"]
    env = {"WARPS_X": threads_x // 8}
    grid = set()
    for thread in range(threads_x * threads_y):
        lane, warp = thread % 32, thread // 32
        tx, ty = (eval(e.replace("/", "//"), {}, {**env, "lane": lane, "warp": warp})   # noqa: S307
                  for e in match.groups())
        grid.add((tx, ty))
        if lane == 0:
            first = (tx, ty)
        # a warp's float4 reads of As (at ty*4) and Bs (at tx*4) span 64 B and 128 B
        assert 0 <= tx - first[0] < 8 and 0 <= ty - first[1] < 4
    assert grid == {(x, y) for x in range(threads_x) for y in range(threads_y)}


LONG_K = "C = A @ B; A: f32[256, 524288]; B: f32[524288, 256]"


def test_a_long_k_with_few_output_tiles_splits_k_for_the_sms_and_for_accuracy():
    p, arch = problem(LONG_K), ARCHS["sm_90"]
    chosen = SKETCH.default_point(p, arch)
    assert 524288 // chosen["k_splits"] <= gemm.ACCURATE_SERIAL_K
    space = SKETCH.space(p, arch)
    assert any("library-level fp32 accuracy" in v for v in space.violations({**chosen, "k_splits": 16}))
    rendered = SKETCH.render(p, arch, chosen, "simt_splitk")
    assert rendered.k_splits == chosen["k_splits"] and len(rendered.launches) == 2
    assert rendered.launches[0].blocks >= 2 * arch.sms
    assert "cudaMallocAsync" in rendered.launcher and "cudaFreeAsync" in rendered.launcher
    # a big output keeps one pass over K
    assert SKETCH.default_point(problem(gemm.SAMPLE_INTENTS[0]), arch)["k_splits"] == 1


def test_a_long_split_k_takes_deep_big_tiles_where_the_output_fills_them():
    arch = ARCHS["sm_90"]
    chosen = SKETCH.default_point(problem(LONG_K), arch)
    assert (chosen["block_m"], chosen["block_n"], chosen["block_k"], chosen["vector"]) == (128, 128, 16, 4)
    # a 64 x 64 output would leave three quarters of a 128 x 128 tile empty
    narrow = SKETCH.default_point(problem("C = A @ B; A: f32[64, 131072]; B: f32[131072, 64]"), arch)
    assert (narrow["block_m"], narrow["block_n"]) == (64, 64) and narrow["k_splits"] > 1
    # a short K split many ways leaves each split too few 16-deep slices to pay
    short = SKETCH.default_point(problem("C = A @ B; A: f32[256, 4096]; B: f32[4096, 256]"), arch)
    assert (short["block_m"], short["block_n"]) == (64, 64)


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_split_k_compiles_clean(arch):
    p = problem(LONG_K)
    chosen = SKETCH.default_point(p, ARCHS[arch])
    rendered = SKETCH.render(p, ARCHS[arch], chosen, "simt_splitk")
    compile_clean(rendered.source, "simt_splitk_kernel", arch)
    compile_clean(rendered.source, "simt_splitk_merge_kernel", arch)
    assert check_source(rendered.source, "splitk.cu") == []
