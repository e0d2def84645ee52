"""The denoisers a search can be given by name (`dice generate --prior`, `CUDAGenerator(prior=)`)."""
from __future__ import annotations

from functools import lru_cache

from .denoiser import Denoiser, HeuristicPrior
from .denoiser_model import DenoiserNet, load
from .learned import LearnedDenoiser

PRIORS = ("heuristic", "learned")
DEFAULT_PRIOR = "heuristic"     # learned becomes the default once measurements show it is better


def check_prior(prior: str) -> None:
    """ValueError (one line) for a name that is not in `PRIORS`."""
    if prior not in PRIORS:
        raise ValueError(f"unknown prior {prior!r}: choose one of {', '.join(PRIORS)}")


@lru_cache(maxsize=1)
def _shipped() -> tuple[DenoiserNet | None, str]:
    return load()          # read once per process; searches share the (read-only) network


def make_denoiser(prior: str = DEFAULT_PRIOR) -> Denoiser:
    """A fresh denoiser named `prior` (its counters and caches are per search)."""
    check_prior(prior)
    if prior == "learned":
        return LearnedDenoiser(*_shipped())
    return HeuristicPrior()
