"""Which candidates the benchmark tries for a case: each serving sketch's default point and a
few single-token neighbours of it, optionally random legal points on top (registry mode), or
the engine's own pick (engine mode)."""
from __future__ import annotations

import random

from ..arch import ArchSpec
from ..ir.patterns import Problem
from ..sketches import registry
from ..sketches.base import Point, Sketch


def neighbours(sketch: Sketch, problem: Problem, arch: ArchSpec, default: Point, limit: int) -> list[Point]:
    """Legal points that differ from `default` in one token by one step, token by token."""
    space = sketch.space(problem, arch)
    found: list[Point] = []
    for token in space.tokens:
        if token.name not in default or default[token.name] not in token.choices:
            continue
        at = token.choices.index(default[token.name])
        for step in (1, -1):
            if 0 <= at + step < len(token.choices):
                point = {**default, token.name: token.choices[at + step]}
                if space.is_legal(point) and point not in found:
                    found.append(point)
            if len(found) >= limit:
                return found
    return found


def explored(sketch: Sketch, problem: Problem, arch: ArchSpec, count: int, seed: int,
             taken: list[Point]) -> list[Point]:
    """`count` legal points drawn at random (fixed seed) from the sketch's space, none in `taken`."""
    pool = [p for p in sketch.space(problem, arch).points() if p not in taken]
    return random.Random(f"{seed}:{sketch.name}").sample(pool, min(count, len(pool)))


def registry_candidates(problem: Problem, arch: ArchSpec, *, per_sketch: int = 2,
                        limit: int = 6, explore: int = 0, seed: int = 0) -> list[tuple[Sketch, Point]]:
    """Every serving sketch's default, then single-token neighbours, cut at `limit`; then
    `explore` random legal points per sketch on top (a wider search for a tuning run)."""
    sketches = registry.candidates(problem, arch)
    defaults: list[tuple[Sketch, Point]] = []
    rest: list[tuple[Sketch, Point]] = []
    for sketch in sketches:
        default = sketch.default_point(problem, arch)
        defaults.append((sketch, default))
        rest += [(sketch, p) for p in neighbours(sketch, problem, arch, default, per_sketch)]
    chosen = (defaults + rest)[:limit]     # every sketch's default first, then neighbours
    for sketch in sketches if explore else ():
        chosen += [(sketch, p) for p in explored(sketch, problem, arch, explore, seed,
                                                 [q for s, q in chosen if s is sketch])]
    return chosen


def sketch_named(name: str) -> Sketch:
    return next(s for s in registry.ALL_SKETCHES if s.name == name)
