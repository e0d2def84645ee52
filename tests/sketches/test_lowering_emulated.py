"""The general lowering's kernels computed on the CPU emulator (cuda_emu.h + g++) and compared
with the float64 reference: multi-kernel plans, workspace, fused epilogues, reductions over any
axes, argmax ties, every reduction schedule, convolutions, pools and scans. No GPU needed; the
GPU twin of this check is tests/gpu/test_lowering_gpu.py."""
from __future__ import annotations

import dataclasses

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.lowering import GeneralLowering

from cpu_emulation import assert_matches_reference, needs_emulator
from lowering_cases import EMULATED_CASES

# The emulator has no stream-ordered allocator: the workspace comes from the heap (blocks run
# one after another on the CPU, so nothing is in flight when it is freed).
ALLOCATOR = r"""
#define cudaMallocAsync(pointer, bytes, stream) emu_malloc(pointer, bytes)
#define cudaFreeAsync(pointer, stream) emu_free(pointer)
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
"""


class Emulated(GeneralLowering):
    def render(self, *args):
        rendered = super().render(*args)
        return dataclasses.replace(rendered, source=ALLOCATOR + rendered.source)


@needs_emulator
@pytest.mark.parametrize("intent, strategies", EMULATED_CASES, ids=[c[0][:60] for c in EMULATED_CASES])
def test_lowered_kernels_match_the_reference(intent: str, strategies: tuple[str, ...], tmp_path) -> None:
    problem = classify(parse_intent(intent))
    sketch = Emulated()
    assert sketch.unsupported(problem, ARCHS["sm_90"]) is None
    space = sketch.space(problem, ARCHS["sm_90"])
    fusions = space.token("fuse").choices
    # a mean/variance (moments) stage: one slice, and four (a merge kernel)
    extra = [{"slices": 1}, {"slices": 4}] if any(t.name == "slices" for t in space.tokens) else [{}]
    points = [{"threads": 64, "strategy": s, "items": 2, "unroll": 2, "fuse": "kernels", "tile": 0, **e}
              for s in strategies for e in extra]
    for fuse in fusions[1:]:    # the one-kernel normalisation too: a block, a thread per group
        points.append({"threads": 64, "strategy": strategies[0], "items": 1, "unroll": 2, "fuse": fuse,
                       "tile": 0, **extra[0]})
    for k, point in enumerate(points):
        work = tmp_path / str(k)
        work.mkdir()
        assert_matches_reference(sketch, problem, point, work)
