"""All sketches, and which of them can serve a problem."""
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.patterns import Problem
from . import (attention, conv, elementwise, gemm, gemm_tc, gemm_tf32, gemm_wgmma, gemv, norm, pool,
               reduction, scan, softmax, transpose)
from ..lowering import GeneralLowering
from .base import Sketch

ALL_SKETCHES: list[Sketch] = [
    *elementwise.SKETCHES, *reduction.SKETCHES, *softmax.SKETCHES, *norm.SKETCHES, *scan.SKETCHES,
    *transpose.SKETCHES, *gemm.SKETCHES, *gemm_tc.SKETCHES, *gemm_wgmma.SKETCHES, *gemm_tf32.SKETCHES,
    *gemv.SKETCHES, *conv.SKETCHES, *pool.SKETCHES, *attention.SKETCHES, GeneralLowering(),
]


def _serves_pattern(sketch: Sketch, problem: Problem) -> bool:
    return sketch.pattern in (problem.pattern, "*")


def candidates(problem: Problem, arch: ArchSpec) -> list[Sketch]:
    """Sketches that can serve `problem` on `arch` (structural variants for the search): the
    families' fast paths and the general lowering, weighed against each other by the search."""
    return [s for s in ALL_SKETCHES if _serves_pattern(s, problem) and s.unsupported(problem, arch) is None]


def why_unsupported(problem: Problem, arch: ArchSpec) -> str:
    reasons = [r for s in ALL_SKETCHES if _serves_pattern(s, problem)
               if (r := s.unsupported(problem, arch))]
    return "; ".join(sorted(set(reasons))) or f"no sketch serves the '{problem.pattern}' pattern"
