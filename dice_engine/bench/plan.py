"""Which candidates the benchmark tries for a case: each serving sketch's default point and a
few single-token neighbours of it (registry mode), or the engine's own pick (engine mode)."""
from __future__ import annotations

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


def registry_candidates(problem: Problem, arch: ArchSpec, *, per_sketch: int = 2,
                        limit: int = 6) -> list[tuple[Sketch, Point]]:
    out: list[tuple[Sketch, Point]] = []
    for sketch in registry.candidates(problem, arch):
        default = sketch.default_point(problem, arch)
        out.append((sketch, default))
        out += [(sketch, p) for p in neighbours(sketch, problem, arch, default, per_sketch)]
    defaults = [c for c in out if c[1] == c[0].default_point(problem, arch)]
    rest = [c for c in out if c not in defaults]
    return (defaults + rest)[:limit]     # every sketch's default first, then neighbours


def sketch_named(name: str) -> Sketch:
    return next(s for s in registry.ALL_SKETCHES if s.name == name)
