"""Integer tensors divided in a fused prologue or epilogue divide as torch does: `/` is true
division in floating point (C's `/` on two ints truncates toward zero). Each family's fused code
runs on the CPU emulator and is compared with torch on the CPU. (`//` is not in the intent
language: the parser refuses it.)"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cpu_emulation import needs_emulator, run_on_cpu  # noqa: E402

from dice_engine.arch import ARCHS  # noqa: E402
from dice_engine.intent import IntentError, parse_intent  # noqa: E402
from dice_engine.ir.patterns import classify  # noqa: E402
from dice_engine.sketches import registry  # noqa: E402

SM90 = ARCHS["sm_90"]

CASES = [  # (sketch, intent, torch's meaning of it)
    ("transpose.tiled", "y = x.T / z; x: i32[40, 24]; z: i32[24, 40]", lambda x, z: x.T / z),
    (
        "transpose.gather",
        "y = x.permute(1, 0, 2) / z; x: i32[6, 5, 8]; z: i32[5, 6, 8]",
        lambda x, z: x.permute(1, 0, 2) / z,
    ),
    (
        "scan.warp_row",
        "y = cumsum(x, dim=1) / z; x: i32[4, 64]; z: i32[4, 64]",
        lambda x, z: torch.cumsum(x, dim=1) / z,
    ),
    ("elementwise.fused", "y = x / z; x: i64[300]; z: i64[300]", lambda x, z: x / z),
]


def _sketch(name: str):
    return next(s for s in registry.ALL_SKETCHES if s.name == name)


def _ints(shape, rng, nonzero=False):
    values = rng.integers(-60, 61, size=shape)
    if nonzero:  # divisors of both signs, small enough that most quotients are fractional
        values = np.where(values == 0, 7, values) % 13 - 6
        values = np.where(values == 0, -7, values)
    return values


def test_floor_division_is_refused_by_the_parser():
    with pytest.raises(IntentError):
        parse_intent("y = x // z; x: i32[8]; z: i32[8]")


@needs_emulator
@pytest.mark.parametrize("name, text, meaning", CASES, ids=[c[0] for c in CASES])
def test_integer_division_in_fused_code_matches_torch(name, text, meaning, tmp_path):
    sketch = _sketch(name)
    problem = classify(parse_intent(text))
    assert sketch.unsupported(problem, SM90) is None
    rng = np.random.default_rng(0)
    decls = problem.program.inputs
    storage = {"i32": np.int32, "i64": np.int64}
    inputs = {
        n: _ints(d.shape, rng, nonzero=n == "z").astype(storage[d.dtype.name]) for n, d in decls.items()
    }
    rendered = sketch.render(problem, SM90, sketch.default_point(problem, SM90), "emulated")
    got = run_on_cpu(rendered, problem, inputs, {}, tmp_path)
    want = meaning(*(torch.from_numpy(inputs[n]) for n in decls)).numpy()
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert np.any(want != np.trunc(want)), "the case must have fractional quotients"
