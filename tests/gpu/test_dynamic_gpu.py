"""compute-sanitizer and Nsight Compute on planted kernels, through the runner's one-shot child."""
from __future__ import annotations

import shutil

import pytest
from planted import planted, problem

from dice_engine.runner.profiler import profile
from dice_engine.runner.sanitizer import sanitize

pytestmark = pytest.mark.gpu


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines()) if text in line)


@pytest.fixture(scope="module")
def sanitizer(runner):
    if shutil.which("compute-sanitizer") is None:
        pytest.skip("compute-sanitizer is not on PATH")
    return runner.gpu["arch"]


def test_memcheck_finds_the_overrun_at_its_region_line(sanitizer):
    kernel = planted("overrun")
    findings = sanitize(kernel, problem(), arch=sanitizer, tools=("memcheck",), path="k.cu", first_line=10)
    print([f.to_json() for f in findings])
    expected_line = 10 + line_of(kernel.source, "y[i] =")
    assert [(f.code, f.file, f.line) for f in findings] == [("DICE-D001", "k.cu", expected_line)]
    assert "out of bounds" in findings[0].message


def test_racecheck_on_a_reduced_grid_finds_the_shared_memory_race(sanitizer):
    kernel = planted("race")
    findings = sanitize(kernel, problem(), arch=sanitizer, tools=("racecheck",))
    print([f.to_json() for f in findings])
    assert {f.code for f in findings} == {"DICE-D002"}
    assert any(f.line == line_of(kernel.source, "__shared__") for f in findings)


def test_a_correct_kernel_is_clean_under_every_tool(sanitizer):
    assert sanitize(planted("good"), problem(), arch=sanitizer) == []


def test_profile_finds_the_strided_load_and_summarizes_the_kernel(runner):
    if shutil.which("ncu") is None:
        pytest.skip("ncu is not on PATH")
    kernel = planted("strided")
    findings = profile(kernel, problem(n=1 << 22), arch=runner.gpu["arch"])
    for f in findings:
        print(f.to_json())
    codes = {f.code: f for f in findings}
    assert codes["DICE-D010"].line == line_of(kernel.source, "i * 32")
    assert codes["DICE-D012"].category == "performance"
    assert "sectors/request" in codes["DICE-D012"].message
