"""All sketches, grouped in families with the sample intents that exercise them, and which of
them can serve a problem.

A family is one module of this package: its `SKETCHES` and its `SAMPLE_INTENTS` (intents that
at least one of its sketches serves; the tests parametrize from them). A new sketch joins a
family's `SKETCHES`, or a new module joins `_FAMILY_MODULES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from ..arch import ArchSpec
from ..ir.patterns import Problem
from ..lowering import GeneralLowering
from . import (
    attention,
    conv,
    conv_depthwise,
    conv_nd,
    conv_winograd,
    elementwise,
    gemm,
    gemm_tc,
    gemm_tf32,
    gemm_wgmma,
    gemm_wgmma_tma,
    gemv,
    norm,
    pool,
    reduction,
    row_gather,
    scan,
    softmax,
    transpose,
)
from .base import Sketch


@dataclass(frozen=True)
class Family:
    name: str
    sketches: tuple[Sketch, ...]
    sample_intents: tuple[str, ...]


def _family(module: ModuleType) -> Family:
    return Family(module.__name__.rsplit(".", 1)[-1], tuple(module.SKETCHES), tuple(module.SAMPLE_INTENTS))


_FAMILY_MODULES = (
    elementwise,
    reduction,
    softmax,
    norm,
    scan,
    transpose,
    gemm,
    gemm_tc,
    gemm_wgmma,
    gemm_wgmma_tma,
    gemm_tf32,
    gemv,
    conv,
    conv_nd,
    conv_depthwise,
    conv_winograd,
    pool,
    attention,
    row_gather,
)

# The general lowering serves any pattern; its samples are programs no fast path serves.
GENERIC = Family(
    "generic",
    (GeneralLowering(),),
    (
        "y = group_norm(x, 8, w, b); x: f32[16, 64, 32, 32]; w: f32[64]; b: f32[64]",
        "y = x / sqrt(mean(x * x, dim=1, keepdim=True) + 1e-5); x: f32[16, 64, 256, 256]",
        "y = conv_transpose2d(x, w, stride=2, padding=1); x: f32[8, 32, 64, 64]; w: f32[32, 64, 3, 3]",
        "y = flip(cumsum(flip(x, dims=[0]), dim=0), dims=[0]); x: f32[128, 4000]",
    ),
)

FAMILIES: dict[str, Family] = {f.name: f for f in [*map(_family, _FAMILY_MODULES), GENERIC]}

ALL_SKETCHES: list[Sketch] = [s for f in FAMILIES.values() for s in f.sketches]


def _serves_pattern(sketch: Sketch, problem: Problem) -> bool:
    return sketch.pattern in (problem.pattern, "*")


def candidates(problem: Problem, arch: ArchSpec) -> list[Sketch]:
    """Sketches that can serve `problem` on `arch` (structural variants for the search): the
    families' fast paths and the general lowering, weighed against each other by the search."""
    return [s for s in ALL_SKETCHES if _serves_pattern(s, problem) and s.unsupported(problem, arch) is None]


def why_unsupported(problem: Problem, arch: ArchSpec) -> str:
    reasons = [r for s in ALL_SKETCHES if _serves_pattern(s, problem) if (r := s.unsupported(problem, arch))]
    return "; ".join(sorted(set(reasons))) or f"no sketch serves the '{problem.pattern}' pattern"
