"""The tiled schedule of the general lowering compiled by real nvcc for sm_80 and sm_90 (every
tiled case at both tile sizes), and without register spills at KernelBench level-1 sizes."""

from __future__ import annotations

import pytest

from dice_engine.arch import ARCHS
from dice_engine.compile import compile_cuda, nvcc_found
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.lowering import GeneralLowering

from test_tiled_emulated import TILED_CASES, tiled_point



pytestmark = [pytest.mark.slow, pytest.mark.skipif(not nvcc_found(), reason="nvcc is not installed")]

LARGE = [
    "C = A @ B; A: f32[16, 256, 512, 256]; B: f32[16, 256, 256, 768]",
    "y = conv3d(x, w); x: f32[16, 3, 64, 64, 64]; w: f32[64, 3, 3, 3, 3]",
    "y = conv_transpose2d(x, w, stride=2, padding=1); x: f32[16, 32, 128, 128]; w: f32[32, 64, 3, 3]",
]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("intent", TILED_CASES, ids=[c[:50] for c in TILED_CASES])
def test_tiled_kernels_compile(intent: str, arch: str) -> None:
    problem = classify(parse_intent(intent))
    for tile, threads in ((32, 128), (64, 256)):
        rendered = GeneralLowering().render(problem, ARCHS[arch], tiled_point(tile, threads), "tiled")
        result = compile_cuda(rendered.source, arch)
        assert result.ok, "\n".join(str(m) for m in result.messages)[:3000]


@pytest.mark.parametrize("intent", LARGE, ids=["matmul4d", "conv3d", "conv_transpose2d"])
def test_tiled_kernels_do_not_spill_at_kernelbench_sizes(intent: str) -> None:
    problem = classify(parse_intent(intent))
    for tile, threads in ((32, 64), (64, 64), (64, 256)):
        rendered = GeneralLowering().render(problem, ARCHS["sm_90"], tiled_point(tile, threads), "tiled")
        result = compile_cuda(rendered.source, "sm_90")
        assert result.ok, "\n".join(str(m) for m in result.messages)[:3000]
        res = result.kernel(rendered.launches[0].kernel)
        assert res is not None and res.spill_bytes == 0, (tile, threads, res)
