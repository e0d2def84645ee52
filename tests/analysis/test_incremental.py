"""The editor path: incremental parsing and the per-function cache."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dice_engine.analysis import Analyzer, check_source
from dice_engine.analysis import registry

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
FILE = "\n".join((CORPUS / name).read_text() for name in (
    "race_raw_neighbor.cu", "prec_gelu_literals.cu", "sync_device_function.cu", "bank_stride2_words.cu",
    "clean_grid_stride.cu"))


def _key(f):
    return (f.code, f.line, f.column, f.end_line, f.end_column, f.message, f.fix)


@pytest.mark.parametrize("old, new", [
    ("0.044715 * v", "0.044715f * v"),                 # fixes one finding in the middle
    ("float v = x[i];", "float v = x[i];\n"),         # adds a line above later functions
    ("s[tid + 1] = in[i];", "s[tid + 1] = in[i]; // ÄÖ"),
])
def test_incremental_update_equals_a_fresh_analysis(old, new):
    analyzer = Analyzer("f.cu")
    analyzer.update(FILE)
    edited = FILE.replace(old, new, 1)
    assert edited != FILE
    assert [_key(f) for f in analyzer.update(edited)] == [_key(f) for f in check_source(edited, "f.cu")]
    assert [_key(f) for f in analyzer.update(FILE)] == [_key(f) for f in check_source(FILE, "f.cu")]


def test_a_one_line_edit_reanalyzes_only_that_function(monkeypatch):
    analyzer = Analyzer("f.cu")
    analyzer.update(FILE)
    analyzed: list[str] = []
    original = Analyzer._function_findings

    def spy(self, src, fn, *args):
        analyzed.append(fn.name)
        return original(self, src, fn, *args)

    monkeypatch.setattr(Analyzer, "_function_findings", spy)
    analyzer.update(FILE.replace("0.044715 * v", "0.044715f * v"))
    assert analyzed == ["gelu"]


def test_editing_a_device_function_reanalyzes_its_callers(monkeypatch):
    src = (CORPUS / "sync_device_function.cu").read_text()
    analyzer = Analyzer("f.cu")
    analyzer.update(src)
    analyzed: list[str] = []
    original = Analyzer._function_findings
    monkeypatch.setattr(Analyzer, "_function_findings",
                        lambda self, s, fn, *a: analyzed.append(fn.name) or original(self, s, fn, *a))
    analyzer.update(src.replace("s[tid] + s[0]", "s[tid] * s[0]"))
    assert sorted(analyzed) == ["block_sum_step", "guarded_helper"]


def test_moving_a_kernel_away_from_its_callee_moves_the_callee_findings_correctly():
    src = (CORPUS / "sync_device_function.cu").read_text()
    analyzer = Analyzer("f.cu")
    analyzer.update(src)
    moved = src.replace("\n__global__", "\n\n\n__global__")
    assert [_key(f) for f in analyzer.update(moved)] == [_key(f) for f in check_source(moved, "f.cu")]


def test_a_device_function_gains_a_caller():
    # alone, `s` is a global pointer (a strided store); called with shared memory, a bank conflict
    helper = "__device__ void put(float* s) { s[threadIdx.x * 2] = 1.0f; }\n"
    kernel = "__global__ void k(float* y) {\n    __shared__ float s[64];\n    y[0] = 0.f;\n}\n"
    analyzer = Analyzer("f.cu")
    assert [f.code for f in analyzer.update(helper + kernel)] == ["DICE-C001"]
    calling = helper + kernel.replace("y[0] = 0.f;", "if (threadIdx.x < 32) put(s);")
    incremental = [f.code for f in analyzer.update(calling)]
    assert incremental == [f.code for f in check_source(calling)] == ["DICE-B001"]


def test_analysis_failures_are_contained(monkeypatch):
    def boom(*args):
        raise RuntimeError("bug in one analysis")

    race = next(r for r in registry.RULES if r.name == "race")
    monkeypatch.setattr(registry, "RULES", tuple(dataclasses.replace(r, check=boom) if r is race else r
                                                for r in registry.RULES))
    findings = check_source(FILE)
    assert findings and not any(f.category == "race" for f in findings)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 30),
                          st.sampled_from(["", "\n", " ", "0.5", "f", ";", "}", "__syncthreads();",
                                           "if (threadIdx.x < 7) ", "int q = 2;\n", "//", "é"])),
                min_size=1, max_size=5))
def test_random_edits_keep_incremental_results_equal_to_fresh_ones(edits):
    text = FILE
    analyzer = Analyzer("f.cu")
    analyzer.update(text)
    for at, length, insert in edits:
        at = at % (len(text) + 1)
        text = text[:at] + insert + text[at + length:]
        assert [_key(f) for f in analyzer.update(text)] == [_key(f) for f in check_source(text, "f.cu")]
