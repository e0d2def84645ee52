"""The denoiser: fills the masked design tokens of a point.

A point starts fully masked and, round after round, the tokens that feedback blames are masked
again; the denoiser proposes values for them. `HeuristicPrior` is the hand-written prior: the
sketch's default point as the mode, then neighbours of the incumbent value, shifted in the
direction the feedback asks for, with a temperature that widens the draw. The learned model
(refine/learned.py, `LearnedDenoiser`) sits behind the same interface and falls back to it.
"""
from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from ..arch import ArchSpec
from ..ir.patterns import Problem
from ..sketches.base import DesignSpace, Point, Sketch


class _Mask:
    def __repr__(self) -> str:
        return "<mask>"


MASK: Any = _Mask()   # the value of a masked token


@dataclass
class DenoiseRequest:
    sketch: Sketch
    space: DesignSpace
    problem: Problem
    arch: ArchSpec
    point: Point                    # every token present; masked ones hold MASK
    anchor: Point | None            # the incumbent the point was masked from (None: start from nothing)
    rng: random.Random
    hints: dict[str, int] = field(default_factory=dict)   # token → -1 smaller, +1 larger, 0 either
    temperature: float = 0.0        # 0: the most likely value for every masked token

    def masked(self) -> list[str]:
        return [t.name for t in self.space.tokens if self.point.get(t.name) is MASK]


class Denoiser(ABC):
    name: str = ""      # what `dice generate --format json` reports as the "prior"

    @abstractmethod
    def fill(self, request: DenoiseRequest) -> Point:
        """A complete point: the request's unmasked tokens unchanged, every masked one chosen."""


def _index(choices: tuple[Any, ...], value: Any) -> int:
    return choices.index(value) if value in choices else 0


class HeuristicPrior(Denoiser):
    """The sketch's default point as the mode; neighbours of the incumbent for re-masked tokens."""

    name = "heuristic"
    STAY_WEIGHT = 0.2   # a re-masked token was blamed: keeping its value is possible but unlikely

    def fill(self, request: DenoiseRequest) -> Point:
        prior = request.sketch.default_point(request.problem, request.arch)
        out = dict(request.point)
        for token in request.space.tokens:
            if out.get(token.name) is not MASK:
                continue
            if request.anchor is None:
                center = float(_index(token.choices, prior.get(token.name)))
                current = None
            else:
                current = _index(token.choices, request.anchor.get(token.name))
                center = current + request.hints.get(token.name, 0)
            if request.temperature <= 0 and current is None:
                out[token.name] = token.choices[int(center)]
                continue
            tau = max(request.temperature, 0.35)
            weights = [math.exp(-abs(i - center) / tau) * (self.STAY_WEIGHT if i == current else 1.0)
                       for i in range(len(token.choices))]
            out[token.name] = request.rng.choices(token.choices, weights)[0]
        return out
