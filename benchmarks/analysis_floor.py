#!/usr/bin/env python3
"""Where a full static analysis of the 2,000-line benchmark file spends its time, and the best a
split over this machine's two cores could do (not a timed test; prints CPU-time medians).

Phases are measured by switching rules off (emptying `registry.RULES`, then keeping only the
rules that need no SIMT trace), so what remains is the file-level work every analysis needs
(parse, function list, file facts, per-function captures and outlines, cache keys). The two-
process bound runs each half of the functions alone: a worker process would also parse and read
the whole file (callers inline callees, launches give block sizes), so max(half A, half B) is a
floor for a two-process split before any IPC.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.analysis_speed import build_file  # noqa: E402
from dice_engine.analysis import analyzer, registry  # noqa: E402
from dice_engine.analysis.syntax import new_parser  # noqa: E402

REPEATS = 21


def median_cpu_ms(fn: Callable[[], object]) -> float:
    samples = []
    for _ in range(REPEATS):
        start = time.process_time()
        fn()
        samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    text = build_file()
    full_analysis = lambda: analyzer.Analyzer().update(text)  # noqa: E731
    full_analysis()                                           # warm imports and numpy
    parser, data = new_parser(), text.encode()
    every_rule, per_function = registry.RULES, analyzer.Analyzer._function_findings

    rows = [("tree-sitter parse", median_cpu_ms(lambda: parser.parse(data)))]
    registry.RULES = ()
    rows.append(("file-level work (parse, functions, facts, captures, outlines)",
                 median_cpu_ms(full_analysis)))
    registry.RULES = tuple(r for r in every_rule if not r.needs_trace)
    rows.append(("+ the rules without the SIMT trace (precision, overflow)", median_cpu_ms(full_analysis)))
    registry.RULES = every_rule
    rows.append(("+ SIMT, sync, race, coalescing, bank conflicts (full analysis)",
                 median_cpu_ms(full_analysis)))

    halves = []
    for half in (0, 1):
        def per_function_half(self, src, fn, *args, _half=half):
            # a fixed, name-independent split
            return per_function(self, src, fn, *args) if fn.node.start_byte % 2 == _half else []

        analyzer.Analyzer._function_findings = per_function_half
        halves.append(median_cpu_ms(full_analysis))
    analyzer.Analyzer._function_findings = per_function
    rows.append((f"two-process floor: max of the halves ({halves[0]:.1f}, {halves[1]:.1f})", max(halves)))

    print(f"{text.count(chr(10)) + 1} lines, median CPU ms of {REPEATS} runs")
    for name, ms in rows:
        print(f"{ms:7.1f}  {name}")


if __name__ == "__main__":
    main()
