"""The intent path's batch, group and instance norm at realistic sizes on the GPU: the moments
kernel + normalize kernel (one slice and the GPU-filling default, a merge kernel) and, where the
space has it, the one-kernel normalisation, each verified by the runner against the float64
reference and timed beside PyTorch eager. The times are printed (run with -s) for the report;
the test asserts correctness only. Skips without a GPU."""
from __future__ import annotations

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.lowering import GeneralLowering

pytestmark = pytest.mark.gpu

INTENTS = [
    "y = relu(batch_norm(x, w, b, training=True)); x: f32[32, 64, 56, 56]; w, b: f32[64]",
    "y = group_norm(x, 8, w, b); x: f32[16, 64, 64, 64]; w, b: f32[64]",
    "y = instance_norm(x); x: f32[16, 64, 128, 128]",
    "y = layer_norm(x, [64, 64]); x: f32[128, 64, 64]",
]


@pytest.mark.parametrize("intent", INTENTS)
def test_intent_norms_verify_and_time(runner, intent: str) -> None:
    problem = classify(parse_intent(intent))
    sketch = GeneralLowering()
    arch = ARCHS["sm_90"]
    base = {"threads": 256, "strategy": "block", "items": 4, "unroll": 1, "tile": 0}
    points = [{**base, "fuse": "kernels", "slices": 1}, {**base, "fuse": "kernels", "slices": 0}]
    if "block" in sketch.space(problem, arch).token("fuse").choices:
        points.append({**base, "items": 1, "fuse": "block", "slices": 0})
    for point in points:
        rendered = sketch.render(problem, arch, point, "norm")
        report = runner.evaluate(rendered, problem, "sm_90")
        assert report.verdict == "ok", report.detail
        assert report.verified is True
        kernels = len(rendered.kernel_names)
        print(f"{intent}\n  fuse={point['fuse']} slices={point['slices']} kernels={kernels}: "
              f"{report.time_us:.1f} us (PyTorch eager {report.reference_time_us})")
