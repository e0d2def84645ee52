"""sm_100 (B200) and sm_120 (RTX 5090): every sketch that serves a problem there renders its
default design into a kernel that real nvcc builds for that target, and no sketch offers a
tensor-core path the target lacks (wgmma is sm_90a-only). No Blackwell GPU here: compiling is
the check, as the issue asks."""
from __future__ import annotations

import pytest

from dice_engine.arch import resolve
from dice_engine.compile import NvccNotFound, compile_cuda, find_nvcc
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches.registry import ALL_SKETCHES, candidates

try:
    find_nvcc()
    HAVE_NVCC = True
except NvccNotFound:
    HAVE_NVCC = False

# One problem per sketch family (and each structural variant: rows vs split rows vs columns).
INTENTS = [
    "y = relu(a) * 2.5 + b; a, b: f32[1048576]",
    "s = sum(x, dim=1); x: f32[4096, 1000]",
    "s = sum(x, dim=1); x: f32[64, 262144]",
    "s = sum(x, dim=0); x: f32[4096, 4096]",
    "y = softmax(x, dim=1); x: f32[4096, 1024]",
    "y = softmax(x, dim=1); x: f16[64, 131072]",
    "y = softmax(x, dim=0); x: f32[100, 333]",
    "y = layer_norm(x, [1024]); x: f32[4096, 1024]",
    "y = rms_norm(x, [262144]); x: f16[16, 262144]",
    "y = cumsum(x, dim=1); x: f32[1024, 4096]",
    "y = cumsum(x, dim=1); x: f32[4, 1000003]",
    "y = cumsum(x, dim=1); x: f32[4096, 32]",
    "y = cumsum(x, dim=0); x: f32[4096, 512]",
    "y = x.T; x: f32[4096, 1000]",
    "y = x.permute(1, 0, 2); x: f32[64, 128, 256]",
    "C = A @ B; A: f32[1024, 1024]; B: f32[1024, 1024]",
    "C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]; accumulate=f32",
    "y = gelu(x @ W + b); x: bf16[2048, 1024]; W: bf16[1024, 4096]; b: bf16[4096]",
    "y = W @ x; W: f32[4096, 4096]; x: f32[4096, 1]",
    "y = conv2d(x, w, padding=1); x: f32[8, 64, 56, 56]; w: f32[64, 64, 3, 3]",
    "y = conv2d(x, w, padding=1); x: f16[8, 64, 56, 56]; w: f16[64, 64, 3, 3]",
    "y = max_pool2d(x, kernel_size=2); x: f32[8, 64, 56, 56]",
    "C = A @ B; A: f32[2048, 1024]; B: f32[1024, 4096]; precision=tf32",
    "y = scaled_dot_product_attention(q, k, v); q, k, v: f32[4, 8, 512, 64]",
    "y = conv_transpose3d(x, w, stride=2, padding=1, groups=2); x: f32[4, 32, 16, 16, 16]; "
    "w: f32[32, 16, 3, 3, 3]",
    "y = conv2d(x, w, padding=1, groups=64); x: f32[8, 64, 56, 56]; w: f32[64, 1, 3, 3]",
    "y = cross_entropy(x, t, reduction='none'); x: f32[4096, 1000]; t: i64[4096]",
    "y = conv_transpose2d(x, w, padding=1); x: f32[8, 64, 32, 32]; w: f32[64, 32, 3, 3]",
]
WGMMA = {"gemm.wgmma", "gemm.wgmma_tma"}   # the sm_90a-only sketches


def _served(arch: str) -> list[tuple[str, object, object]]:
    spec = resolve(arch)
    out = []
    for intent in INTENTS:
        problem = classify(parse_intent(intent))
        out += [(intent, problem, sketch) for sketch in candidates(problem, spec)]
    return out


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_every_sketch_but_wgmma_serves_a_problem_there(arch):
    served = {sketch.name for _, _, sketch in _served(arch)}
    assert not WGMMA & served
    assert served == {s.name for s in ALL_SKETCHES} - WGMMA


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_wgmma_says_why_it_cannot_serve_blackwell(arch):
    problem = classify(parse_intent(INTENTS[16]))
    for wgmma in [s for s in ALL_SKETCHES if s.name in WGMMA]:
        assert "sm_90a" in wgmma.unsupported(problem, resolve(arch))
        assert wgmma.unsupported(problem, resolve("sm_90")) is None


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc")
@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_default_designs_compile_for_blackwell(arch):
    spec = resolve(arch)
    failures = []
    for intent, problem, sketch in _served(arch):
        rendered = sketch.render(problem, spec, sketch.default_point(problem, spec), "k")
        target = rendered.compile_arch(arch)
        assert target == arch, (sketch.name, target)       # no arch-specific (a) target needed
        built = compile_cuda(rendered.source, target, filename=f"{sketch.name}.cu")
        if not built.ok:
            failures.append(f"{sketch.name} for {intent!r}: {built.log[:400]}")
        else:
            assert built.resources, sketch.name
    assert not failures, "\n".join(failures)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc")
@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_generate_serves_every_family_there(arch):
    """The whole search (`dice generate --arch …`), not only the default designs: every kernel it
    returns was built by nvcc for the target, spill-free, and no wgmma kernel is among them."""
    from dice_engine import CUDAGenerator
    generator = CUDAGenerator(arch=arch, budget=2)
    families = set()
    for intent in INTENTS:
        result = generator.generate(intent)
        assert result.arch == arch and "wgmma" not in result.source, intent
        assert result.resources["registers"] > 0 and result.resources["spill_bytes"] == 0, intent
        families.add(result.sketch.split(".")[0])
    # Every family's default design builds there (test above); the search may prefer the general
    # lowering where the cost model ranks it first (on sm_120 a 1M-element map: its 4 waves of
    # small blocks against the elementwise family's 2 waves with a tail).
    assert families <= {s.name.split(".")[0] for s in ALL_SKETCHES}
    assert len(families) >= 6, families
