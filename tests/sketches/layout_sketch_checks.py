"""Helpers for the transpose/scan/conv/pool sketch tests: problems from intents, and compiling
many rendered kernels as one translation unit (each region lives in its own namespace, which is
exactly what lets several share a file) to keep nvcc invocations few."""
from __future__ import annotations

import random
import shutil

import pytest

from dice_engine.arch import ARCHS
from dice_engine.compile import compile_cuda
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import Problem, classify
from dice_engine.sketches.base import Point, RenderedKernel, Sketch

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")


@pytest.fixture(autouse=True)
def private_compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DICE_CACHE_DIR", str(tmp_path / "cache"))


def problem(text: str) -> Problem:
    return classify(parse_intent(text))


def serving(sketches: list[Sketch], text: str, arch: str = "sm_90") -> list[tuple[Sketch, Problem]]:
    p = problem(text)
    return [(s, p) for s in sketches if s.unsupported(p, ARCHS[arch]) is None]


def some_points(sketch: Sketch, p: Problem, arch: str, sampled: int = 3, corners: bool = True) -> list[Point]:
    """The default point, every corner (unless `corners` is False), and a few seeded random legal
    points."""
    space = sketch.space(p, ARCHS[arch])
    legal = list(space.points())
    points = [sketch.default_point(p, ARCHS[arch]), *(space.corners() if corners else []),
              *random.Random(0).sample(legal, min(sampled, len(legal)))]
    unique = []
    for point in points:
        if point not in unique:
            unique.append(point)
    return unique


def compile_clean(rendered: list[RenderedKernel], arch: str) -> None:
    """Compile every rendered region in one file; it must build without warnings and each kernel
    without spills."""
    result = compile_cuda("\n".join(r.source for r in rendered), arch)
    assert result.ok, result.first_error() + "\n" + result.log[-3000:]
    assert [m.message for m in result.messages if m.severity == "warning"] == []
    for r in rendered:
        for kernel in r.kernel_names:
            resources = result.kernel(kernel)
            assert resources is not None, (kernel, sorted(result.resources))
            assert resources.spill_bytes == 0 and resources.stack_bytes == 0, (kernel, r.tokens, resources)
