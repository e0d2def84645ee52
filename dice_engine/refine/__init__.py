"""The DICE refinement loop: denoise design tokens round by round, scoring each candidate by
measurement (runner) or by the analytic cost model, re-masking what the feedback blames."""
from .cost import CostEstimate, estimate
from .denoiser import MASK, DenoiseRequest, Denoiser, HeuristicPrior
from .learned import LearnedDenoiser
from .loop import Candidate, Evaluation, Runner, Search

__all__ = ["MASK", "Candidate", "CostEstimate", "DenoiseRequest", "Denoiser", "Evaluation", "HeuristicPrior",
           "LearnedDenoiser", "Runner", "Search", "estimate"]
