"""The sketch contract as the registry states it: every sketch sits in a family whose sample
intents it serves, and `Sketch.render` itself refuses illegal points, for every sketch alike."""

from __future__ import annotations

import itertools

import pytest

from dice_engine.arch import resolve
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import Problem, classify
from dice_engine.sketches import registry
from dice_engine.sketches.base import IllegalPoint, Point, Sketch

ARCHS = [resolve("sm_80"), resolve("sm_90")]


def _served(sketch: Sketch) -> list[tuple[Problem, object]]:
    """(problem, arch) for each sample intent of the sketch's family that it serves."""
    family = next(f for f in registry.FAMILIES.values() if sketch in f.sketches)
    out = []
    for text in family.sample_intents:
        problem = classify(parse_intent(text))
        for arch in ARCHS:
            if sketch.pattern in (problem.pattern, "*") and sketch.unsupported(problem, arch) is None:
                out.append((problem, arch))
                break
    return out


SKETCHES = [pytest.param(s, id=s.name) for s in registry.ALL_SKETCHES]


def test_every_sketch_sits_in_exactly_one_family():
    names = [s.name for s in registry.ALL_SKETCHES]
    assert len(names) == len(set(names))
    for sketch in registry.ALL_SKETCHES:
        assert sum(sketch in f.sketches for f in registry.FAMILIES.values()) == 1, sketch.name


@pytest.mark.parametrize("sketch", SKETCHES)
def test_every_sketch_serves_a_sample_intent_of_its_family(sketch):
    assert _served(sketch), f"no sample intent of its family is served by {sketch.name}"


def _constraint_breaker(sketch: Sketch, problem: Problem, arch) -> Point | None:
    """A point with every token among its choices that a constraint rejects, if there is one."""
    space = sketch.space(problem, arch)
    for values in itertools.product(*(t.choices for t in space.tokens)):
        point = dict(zip((t.name for t in space.tokens), values))
        if not space.is_legal(point):
            return point
    return None


@pytest.mark.parametrize("sketch", SKETCHES)
def test_render_refuses_illegal_points_with_one_error(sketch):
    problem, arch = _served(sketch)[0]
    default = sketch.default_point(problem, arch)
    assert sketch.render(problem, arch, default, "dice_check").source
    token = sketch.space(problem, arch).tokens[0]
    off_choices = {**default, token.name: "not-a-choice"}
    expected = rf"illegal point .* for {sketch.name}: {token.name}='not-a-choice' is not one of"
    with pytest.raises(IllegalPoint, match=expected):
        sketch.render(problem, arch, off_choices, "dice_check")
    missing = {k: v for k, v in default.items() if k != token.name}
    with pytest.raises(IllegalPoint, match=f"for {sketch.name}: {token.name}=None"):
        sketch.render(problem, arch, missing, "dice_check")
    broken = _constraint_breaker(sketch, problem, arch)
    if broken is not None:
        with pytest.raises(IllegalPoint, match=f"illegal point .* for {sketch.name}: "):
            sketch.render(problem, arch, broken, "dice_check")
