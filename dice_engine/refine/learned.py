"""`LearnedDenoiser`: masked discrete diffusion over design tokens, conditioned on the problem
and the target.

A request's masked tokens are filled over a few rounds, like block diffusion over a design:
each round the network (refine/denoiser_model.py) sees the problem's features and every slot
(its value, or MASK), and the most confident masked slots are fixed first; the rest are
predicted again with those in view. A slot's choices are limited to values that leave a legal
completion of what is fixed, so the fill lands in the space. Unmasked tokens never change; a
re-masked token keeps its incumbent value only with a small weight (it was blamed) and the
feedback's direction is favoured; temperature 0 takes the most likely value, a higher one
samples from a wider distribution.

Requests the network cannot serve (no weights, an unknown sketch, token or choice, a pattern,
an architecture or a sketch it saw too little of in training) go to the `HeuristicPrior`;
`name` says which of the two filled the points.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..sketches.base import DesignSpace, Point
from .denoiser import MASK, DenoiseRequest, Denoiser, HeuristicPrior
from .denoiser_model import DenoiserNet
from .features import problem_features

ROUNDS = 3                   # unmasking rounds per fill (fewer when fewer tokens are masked)
STAY_WEIGHT = 0.2            # as the heuristic's: a blamed token rarely keeps its value
AGAINST_HINT_WEIGHT = 0.2    # values on the side the feedback did not ask for
UNIFORM_FLOOR = 0.02         # sampling mixes in this much of uniform, so any legal value can come
MAX_ENUMERATED = 50_000      # larger spaces are filled without the legality steering
MIN_EXAMPLES = 30            # a sketch trained on fewer designs is left to the heuristic


class LearnedDenoiser(Denoiser):
    """The network's fill where it knows the sketch; the heuristic prior elsewhere."""

    def __init__(self, net: DenoiserNet | None = None, why_not: str = "",
                 fallback: Denoiser | None = None):
        self.net, self.why_not = net, why_not
        self.fallback = fallback or HeuristicPrior()
        self.served = {"learned": 0, "heuristic": 0}
        self._legal: dict[int, tuple[DesignSpace, list[Point] | None]] = {}
        self._features: tuple[Any, Any, np.ndarray] | None = None   # (problem, arch, features)

    @property
    def name(self) -> str:     # type: ignore[override]
        """"learned" when the network filled every point so far, "heuristic" when it filled none
        (no weights, or no known sketch), "learned+heuristic" when both did."""
        used = [k for k, n in self.served.items() if n]
        return "+".join(used) if used else ("learned" if self.net is not None else "heuristic")

    def note(self) -> str:
        """A line for the report when the heuristic filled some points, saying why; else ""."""
        fallback = self.served["heuristic"]
        if not fallback:
            return ""
        why = self.why_not or "the network was not trained on this sketch, pattern or target"
        return (f"prior: the heuristic filled {fallback} of {fallback + self.served['learned']} points "
                f"({why})")

    def knows(self, request: DenoiseRequest) -> bool:
        """Whether the network has a slot for every token and every choice of the request, and
        (where its training record says) was trained on the problem's pattern, on the target's
        architecture and on enough designs of the sketch."""
        if self.net is None:
            return False
        vocab, sketch, meta = self.net.vocab, request.sketch.name, self.net.meta
        if "patterns" in meta and request.problem.pattern not in meta["patterns"]:
            return False
        if "archs" in meta and request.arch.name not in meta["archs"]:
            return False        # trained on other GPUs' measurements: their figures never varied
        if "examples_per_sketch" in meta and meta["examples_per_sketch"].get(sketch, 0) < MIN_EXAMPLES:
            return False
        for token in request.space.tokens:
            slot = vocab.slot(sketch, token.name)
            if slot is None or any(vocab.choice_index(slot, c) is None for c in token.choices):
                return False
        return True

    def fill(self, request: DenoiseRequest) -> Point:
        if not self.knows(request):
            self.served["heuristic"] += 1
            return self.fallback.fill(request)
        self.served["learned"] += 1
        assert self.net is not None
        vocab, sketch = self.net.vocab, request.sketch.name
        slots = {t.name: vocab.slot(sketch, t.name) for t in request.space.tokens}
        out = dict(request.point)
        masked = request.masked()
        legal = self._legal_points(request.space)
        features = self._problem_features(request)
        rounds = max(1, min(ROUNDS, len(masked)))
        for round_no in range(rounds):
            if not masked:
                break
            values = {slots[name]: (None if out[name] is MASK
                                    else vocab.choice_index(slots[name], out[name])) for name in out}
            logits = self.net.logits(vocab.encode(features, sketch, values)[None])[0]
            fixed = {k: v for k, v in out.items() if v is not MASK}
            consistent = (None if legal is None
                          else [p for p in legal if all(p[k] == v for k, v in fixed.items())])
            proposals = {name: self._distribution(request, name, slots[name], logits, consistent)
                         for name in masked}
            take = math.ceil(len(masked) / (rounds - round_no))
            confident = sorted(masked, key=lambda n: -max(proposals[n][1]))[:take]
            for name in confident:
                choices, probs = proposals[name]
                out[name] = self._draw(request, choices, probs)
            masked = [n for n in masked if n not in confident]
        return out

    def _problem_features(self, request: DenoiseRequest) -> np.ndarray:
        cached = self._features
        if cached is None or cached[0] is not request.problem or cached[1] is not request.arch:
            cached = self._features = (request.problem, request.arch,
                                       problem_features(request.problem, request.arch))
        return cached[2]

    def _legal_points(self, space: DesignSpace) -> list[Point] | None:
        """Every legal point of `space` (kept per space object: the search keeps its spaces);
        None when the space is too large to list."""
        cached = self._legal.get(id(space))
        if cached is None or cached[0] is not space:
            size = math.prod(len(t.choices) for t in space.tokens)
            cached = (space, list(space.points()) if size <= MAX_ENUMERATED else None)
            self._legal[id(space)] = cached
        return cached[1]

    def _distribution(self, request: DenoiseRequest, name: str, slot: int, logits: np.ndarray,
                      consistent: list[Point] | None) -> tuple[list[Any], list[float]]:
        """The token's allowed choices and their probabilities: the network's, limited to values
        with a legal completion, the incumbent and the side against the hint down-weighted."""
        assert self.net is not None
        token = request.space.token(name)
        allowed = [c for c in token.choices if consistent is None or any(p[name] == c for p in consistent)]
        allowed = allowed or list(token.choices)
        index = [self.net.vocab.choice_index(slot, c) for c in allowed]
        row = logits[slot, index].astype(np.float64)
        probs = np.exp(row - row.max())
        anchor = request.anchor.get(name) if request.anchor is not None else None
        if anchor in token.choices:
            at = token.choices.index(anchor)
            hint = request.hints.get(name, 0)
            for i, c in enumerate(allowed):
                position = token.choices.index(c)
                if position == at:
                    probs[i] *= STAY_WEIGHT
                elif hint and (position - at) * hint < 0:
                    probs[i] *= AGAINST_HINT_WEIGHT
        probs /= probs.sum()
        return allowed, probs.tolist()

    @staticmethod
    def _draw(request: DenoiseRequest, choices: list[Any], probs: list[float]) -> Any:
        if request.temperature <= 0:
            return choices[int(np.argmax(probs))]
        widened = [p ** (1.0 / request.temperature) for p in probs]
        total = sum(widened)
        weights = [(1 - UNIFORM_FLOOR) * w / total + UNIFORM_FLOOR / len(choices) for w in widened]
        return request.rng.choices(choices, weights)[0]
