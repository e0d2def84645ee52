"""Helpers for the memory-bound sketch tests (elementwise, reduction, softmax, norm): problems
from intents, the points to try, and compiling many rendered regions as one translation unit
(each lives in its own namespace), so that nvcc runs a few times per test file, not per point."""
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
ARCH_NAMES = ("sm_80", "sm_90")


def problem(text: str) -> Problem:
    return classify(parse_intent(text))


def serving(sketches: list[Sketch], p: Problem, arch: str = "sm_90") -> list[Sketch]:
    return [s for s in sketches if s.unsupported(p, ARCHS[arch]) is None]


def points_to_try(sketch: Sketch, p: Problem, arch: str, sampled: int = 3) -> list[Point]:
    """The default point, every corner and a few seeded random legal points, each once."""
    space = sketch.space(p, ARCHS[arch])
    legal = list(space.points())
    candidates = [sketch.default_point(p, ARCHS[arch]), *space.corners(),
                  *random.Random(7).sample(legal, min(sampled, len(legal)))]
    unique: list[Point] = []
    for point in candidates:
        if point not in unique:
            unique.append(point)
    return unique


def render_all(sketches: list[Sketch], intents: list[str], arch: str, *,
               corners: bool) -> list[RenderedKernel]:
    """Every serving sketch's default point (and with `corners`, corners and samples) for each
    intent, with unique kernel names."""
    out = []
    for i, text in enumerate(intents):
        p = problem(text)
        assert serving(sketches, p, arch), f"no sketch serves {text!r}"
        for sketch in serving(sketches, p, arch):
            points = points_to_try(sketch, p, arch) if corners else [sketch.default_point(p, ARCHS[arch])]
            for j, point in enumerate(points):
                assert sketch.space(p, ARCHS[arch]).is_legal(point), (sketch.name, text, point)
                name = f"t{i}_{sketch.name.replace('.', '_')}_{j}"
                out.append(sketch.render(p, ARCHS[arch], point, name))
    return out


def compile_clean(rendered: list[RenderedKernel], arch: str) -> None:
    """Compile all regions in one file: no errors, no warnings, no spills, no local memory."""
    result = compile_cuda("\n".join(r.source for r in rendered), arch)
    assert result.ok, result.first_error() + "\n" + result.log[-3000:]
    warnings = [m.message for m in result.messages if m.severity == "warning"]
    assert not warnings, warnings[:5]
    for r in rendered:
        for kernel in r.kernel_names:
            resources = result.kernel(kernel)
            assert resources is not None, (kernel, sorted(result.resources)[:10])
            assert resources.spill_bytes == 0 and resources.stack_bytes == 0, (kernel, r.tokens, resources)


def evaluate_c(expr: str, env: dict[str, int]) -> int:
    """Evaluates a generated C index expression over non-negative 64-bit integers in Python."""
    python = expr.replace("LL", "").replace("/", "//").replace("(long long)", "")
    return int(eval(python, {}, dict(env)))  # noqa: S307 - our own generated arithmetic
