"""The heuristic prior and the feedback blame, in isolation."""
from __future__ import annotations

import random
from collections import Counter

from tiny_sketch import TinySketch, scale_problem

from dice_engine.arch import occupancy, resolve
from dice_engine.refine import MASK, DenoiseRequest, HeuristicPrior
from dice_engine.refine.blame import blame_estimate, blame_everything
from dice_engine.refine.cost import CostEstimate
from dice_engine.sketches.base import DesignSpace, Role, Token

A100 = resolve("a100")


def _request(point, anchor, hints=None, temperature=0.0, seed=0):
    sketch = TinySketch()
    problem = scale_problem()
    return DenoiseRequest(sketch, sketch.space(problem, A100), problem, A100, point, anchor,
                          random.Random(seed), hints or {}, temperature)


def test_a_fully_masked_point_at_zero_temperature_is_the_prior_mode():
    point = HeuristicPrior().fill(_request({"threads": MASK, "items_per_thread": MASK}, None))
    assert point == {"threads": 32, "items_per_thread": 16}


def test_unmasked_tokens_stay_and_hints_push_masked_ones():
    anchor = {"threads": 256, "items_per_thread": 4}
    draws = Counter()
    for seed in range(200):
        filled = HeuristicPrior().fill(_request({"threads": 256, "items_per_thread": MASK}, anchor,
                                                {"items_per_thread": -1}, 0.5, seed))
        assert filled["threads"] == 256
        draws[filled["items_per_thread"]] += 1
    assert draws[2] > draws[8] and draws[2] > draws[4]     # one step down is the mode


def _gemm_like_space() -> DesignSpace:
    """Tokens of every blame role, named so that no name hints at its role."""
    def token(name, role):
        return Token(name, (1, 2, 4), "", (role,) if role else ())
    return DesignSpace([token("a", Role.THREADS), token("b", Role.TILE), token("c", Role.WORK),
                        token("d", Role.VECTOR), token("e", Role.UNROLL), token("f", Role.SPLIT),
                        token("g", Role.PIPELINE), token("h", Role.SMEM), token("i", None),
                        Token("j", (1,), "one choice: nothing to move", (Role.TILE,))])


def _estimate(spill=0, registers=32, blocks=100_000, threads=256, arch=A100):
    return CostEstimate(10.0, 1.0, 0.0, 1.0, occupancy(arch, threads, registers, 0), blocks, 1.0, spill)


def test_blame_follows_the_feedback():
    space = TinySketch().space(scale_problem(), A100)
    spills = blame_estimate(space, _estimate(spill=64), A100.sms)
    assert spills.reason == "register spills" and spills.tokens == {"threads": 0, "items_per_thread": -1}
    low = blame_estimate(space, _estimate(registers=128), A100.sms)
    assert low.reason == "occupancy limited by registers" and low.tokens["items_per_thread"] == -1
    # sm_86 holds at most 16 blocks: one-warp blocks fill 16 of 48 warps
    small_blocks = blame_estimate(space, _estimate(threads=32, arch=resolve("sm_86")), A100.sms)
    assert small_blocks.tokens == {"threads": +1}
    thin = blame_estimate(space, _estimate(blocks=20), A100.sms)
    assert thin.reason == "grid smaller than the GPU" and thin.tokens == {"items_per_thread": -1}
    assert blame_estimate(space, _estimate(), A100.sms) is None


def test_blame_picks_tokens_by_declared_role_not_name():
    space = _gemm_like_space()
    spills = blame_estimate(space, _estimate(spill=64), A100.sms)
    assert spills.tokens == {"a": 0, "b": -1, "c": -1, "d": -1, "e": -1}
    smem = CostEstimate(10.0, 1.0, 0.0, 1.0, occupancy(A100, 256, 32, 96 * 1024), 100_000, 1.0, 0)
    assert smem.occupancy.limiter == "shared memory"
    shared = blame_estimate(space, smem, A100.sms)
    assert shared.tokens == {"b": -1, "c": -1, "d": -1, "e": -1, "g": -1, "h": -1}
    thin = blame_estimate(space, _estimate(blocks=20), A100.sms)
    assert thin.tokens == {"b": -1, "c": -1, "d": -1, "e": -1, "f": +1}   # more splits fill the grid
    assert set(blame_everything(space, "compile error").tokens) == set("abcdefghi")
