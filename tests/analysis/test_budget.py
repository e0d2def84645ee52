"""The analysis budget: which inputs the static analyses skip, and where the finding points."""
from __future__ import annotations

import time

from dice_engine.analysis.budget import MAX_NESTING, over_budget

KERNEL = "__global__ void k(float* x) {\n    x[threadIdx.x] = (x[threadIdx.x] + 1.0f) * 2.0f;\n}\n"


def test_ordinary_code_is_analysed():
    assert over_budget(KERNEL * 200) is None
    assert over_budget("") is None and over_budget(")))]]}") is None


def test_a_file_over_a_megabyte_is_skipped_and_says_its_size():
    skipped = over_budget(KERNEL * 20_000)
    assert skipped is not None and skipped.line == 0 and "MB" in skipped.reason


def test_a_huge_statement_is_found_even_across_many_lines():
    one_line = "int y = 0;\n\nint x = " + " + ".join(["y"] * 10_000) + ";\n"
    many_lines = "int y = 0;\n\nint x = " + " +\n".join(["y"] * 10_000) + ";\n"
    for text in (one_line, many_lines):
        skipped = over_budget(text)
        assert skipped is not None and skipped.line == 2 and "statement" in skipped.reason


def test_nesting_is_counted_from_what_is_open_and_located():
    deep = "int a;\n" + "(" * (MAX_NESTING + 1) + ")" * (MAX_NESTING + 1)
    skipped = over_budget(deep)
    assert skipped is not None and skipped.line == 1 and f"{MAX_NESTING + 1:,} deep" in skipped.reason
    # closes with nothing open do not lower the floor: still just MAX_NESTING deep
    assert over_budget(")" * 500 + "(" * MAX_NESTING + ")" * MAX_NESTING) is None


def test_the_checks_are_cheap_on_a_large_file():
    text = KERNEL * 8_000          # ~0.8 MB, under the size limit: every scan runs
    started = time.perf_counter()
    assert over_budget(text) is None
    assert time.perf_counter() - started < 0.5
