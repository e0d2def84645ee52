"""Every general-lowering case compiled by real nvcc for sm_80 and sm_90, at each reduction
strategy, through the engine's front door (classify → registry → render → compile)."""
from __future__ import annotations

import pytest

from dice_engine.arch import ARCHS
from dice_engine.compile import compile_cuda, nvcc_found
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches.registry import candidates

from lowering_cases import EMULATED_CASES, lowering_point



pytestmark = [pytest.mark.slow, pytest.mark.skipif(not nvcc_found(), reason="nvcc is not installed")]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("intent", [c[0] for c in EMULATED_CASES], ids=[c[0][:50] for c in EMULATED_CASES])
def test_lowered_kernels_compile(intent: str, arch: str) -> None:
    problem = classify(parse_intent(intent))
    sketch = next(s for s in candidates(problem, ARCHS[arch]) if s.name == "generic.lowered")
    space = sketch.space(problem, ARCHS[arch])
    for fuse in space.token("fuse").choices:
        for strategy in ("thread", "block", "split"):
            point = lowering_point(space, threads=128, strategy=strategy, items=1, unroll=2, fuse=fuse,
                                   tile=0)
            rendered = sketch.render(problem, ARCHS[arch], point, "lowered")
            result = compile_cuda(rendered.source, rendered.compile_arch(arch))
            assert result.ok, "\n".join(str(m) for m in result.messages)[:3000]


@pytest.mark.parametrize("intent", ["y = cumprod(t0, dim=1) + v1; t0, v1: f32[64, 128]",
                                    "y = softmax(t0 * f0, dim=1) + m0; t0, f0, m0: f32[64, 128]"])
def test_tensors_named_like_the_lowerings_temporaries_keep_their_names(intent: str) -> None:
    problem = classify(parse_intent(intent))
    sketch = next(s for s in candidates(problem, ARCHS["sm_90"]) if s.name == "generic.lowered")
    for strategy in ("thread", "block"):
        point = {"threads": 128, "strategy": strategy, "items": 1, "unroll": 1, "fuse": "kernels", "tile": 0}
        rendered = sketch.render(problem, ARCHS["sm_90"], point, "lowered")
        result = compile_cuda(rendered.source, "sm_90")
        assert result.ok, "\n".join(str(m) for m in result.messages)[:3000]
