"""The general lowering's shared-memory tiled schedule (`tile` token) for matmul-like and
convolution stages, computed on the CPU emulator (tests/sketches/cuda_emu.h + g++) against the
float64 reference: batched and broadcast matmuls, transposed operands, fused producers and
epilogues, ragged tiles, convolutions and transposed convolutions of every rank with stride,
padding, dilation and output padding, f16/f64, symbolic sizes. No GPU needed."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.lowering import GeneralLowering

sys.path.insert(0, str(Path(__file__).parents[1] / "sketches"))
from cpu_emulation import assert_matches_reference, needs_emulator  # noqa: E402
from test_lowering_emulated import ALLOCATOR  # noqa: E402

TILED_CASES = [
    "C = A @ B; A: f32[2, 3, 33, 40]; B: f32[40, 7]",
    "C = torch.bmm(A, B); A: f32[3, 35, 20]; B: f32[3, 20, 66]",
    "C = A.T @ B.T; A: f32[37, 30]; B: f32[41, 37]",
    "y = relu(relu(A) @ B + b) * 2.0; A: f32[45, 20]; B: f32[20, 70]; b: f32[70]",
    "C = A @ B; A: f16[40, 50]; B: f16[50, 33]",
    "C = A @ B; A: f64[N, 17]; B: f64[17, 9]; N=70",
    "C = A @ B; A: f32[2, 3, 20, 18]; B: f32[2, 3, 18, 10]",
    "y = conv1d(x, w, b, stride=2, padding=1, dilation=2); x: f32[2, 4, 37]; w: f32[6, 4, 3]; b: f32[6]",
    "y = relu(conv2d(x, w, stride=(2, 1), padding=1)); x: f32[2, 5, 9, 8]; w: f32[7, 5, 3, 3]",
    "y = conv3d(x, w, padding=(1, 0, 1)); x: f32[1, 3, 5, 4, 3]; w: f32[4, 3, 3, 2, 3]",
    "y = conv_transpose1d(x, w, stride=3, padding=2, output_padding=1, dilation=2); "
    "x: f32[2, 3, 11]; w: f32[3, 5, 4]",
    "y = conv_transpose2d(x, w, stride=2, padding=1, output_padding=1); "
    "x: f32[1, 4, 5, 6]; w: f32[4, 3, 3, 2]",
    "y = conv_transpose3d(x, w, stride=2, padding=1); x: f32[1, 2, 3, 4, 3]; w: f32[2, 3, 3, 3, 2]",
]


def tiled_point(tile: int, threads: int) -> dict:
    """A tiled design point of the general lowering (a thread per output outside the tiles)."""
    return dict(threads=threads, strategy="thread", items=1, unroll=1, fuse="kernels", tile=tile)


class Emulated(GeneralLowering):
    def render(self, *args):
        rendered = super().render(*args)
        return dataclasses.replace(rendered, source=ALLOCATOR + rendered.source)


@needs_emulator
@pytest.mark.parametrize("intent", TILED_CASES, ids=[c[:60] for c in TILED_CASES])
def test_tiled_contractions_match_the_reference(intent: str, tmp_path) -> None:
    problem = classify(parse_intent(intent))
    sketch = Emulated()
    assert sketch.space(problem, ARCHS["sm_90"]).token("tile").choices == (0, 32, 64)
    for k, (tile, threads) in enumerate([(32, 64), (64, 256)]):
        point = tiled_point(tile, threads)
        rendered = sketch.render(problem, ARCHS["sm_90"], point, "emulated")
        assert "/tiled" in rendered.summary or "/tiled" in rendered.source.split("// design tokens")[0]
        work = tmp_path / str(k)
        work.mkdir()
        assert_matches_reference(sketch, problem, point, work)


def test_grouped_convolutions_offer_no_tile() -> None:
    problem = classify(parse_intent("y = conv2d(x, w, groups=2); x: f32[1, 4, 7, 6]; w: f32[4, 2, 3, 3]"))
    assert GeneralLowering().space(problem, ARCHS["sm_90"]).token("tile").choices == (0,)
