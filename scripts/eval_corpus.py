#!/usr/bin/env python3
"""Score DICE's static analyses on the annotated kernel corpora (tests/corpus, tests/corpus_wild).

Prints, per category, recall (expected findings found) and precision (findings that were
expected), lists every miss and false alarm, and exits 1 when any category of the project corpus
is below the targets (recall >= 90%, precision >= 95%). The held-out corpus (tests/corpus_wild,
written without reading the analyses) is scored too, as a measurement: it never sets the exit
code. The annotation format is described in tests/corpus/README.md.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dice_engine.analysis import check_source  # noqa: E402
from dice_engine.analysis.codes import CODES, STATIC_CATEGORIES  # noqa: E402
from dice_engine.analysis.findings import CATEGORIES, Finding  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
HELD_OUT = Path(__file__).resolve().parent.parent / "tests" / "corpus_wild"
RECALL_TARGET, PRECISION_TARGET = 0.90, 0.95
_EXPECT = re.compile(r"//\s*expect:\s*(.+?)\s*$")


@dataclass(frozen=True)
class Expectation:
    file: str
    line: int            # 0-based
    category: str
    code: str | None     # when the annotation names a code, the finding must carry it

    def matches(self, f: Finding) -> bool:
        return (f.category == self.category and f.line <= self.line <= f.end_line
                and (self.code is None or f.code == self.code))


def expectations(path: Path) -> tuple[list[Expectation], bool]:
    """The file's expectations, and whether it declares `expect: none`."""
    out: list[Expectation] = []
    none = False
    for row, line in enumerate(path.read_text().splitlines()):
        m = _EXPECT.search(line)
        if not m:
            continue
        for item in (x.strip() for x in m.group(1).split(",")):
            if item == "none":
                none = True
                continue
            what, _, at = item.partition("@")
            target = int(at) - 1 if at else row
            if what in CODES:
                out.append(Expectation(path.name, target, CODES[what].category, what))
            elif what in CATEGORIES:
                out.append(Expectation(path.name, target, what, None))
            else:
                raise ValueError(f"{path.name}:{row + 1}: unknown expectation {item!r}")
    return out, none


@dataclass
class Score:
    expected: int = 0
    found: int = 0
    reported: int = 0
    correct: int = 0

    @property
    def recall(self) -> float:
        return self.found / self.expected if self.expected else 1.0

    @property
    def precision(self) -> float:
        return self.correct / self.reported if self.reported else 1.0


def evaluate(corpus: Path) -> tuple[dict[str, Score], list[str]]:
    scores: dict[str, Score] = defaultdict(Score)
    problems: list[str] = []
    files = sorted(corpus.glob("*.cu"))
    for path in files:
        expected, none = expectations(path)
        if none and expected:
            problems.append(f"{path.name}: both `expect: none` and expectations")
        findings = [f for f in check_source(path.read_text(), path.name) if f.category in STATIC_CATEGORIES]
        for e in expected:
            scores[e.category].expected += 1
            if any(e.matches(f) for f in findings):
                scores[e.category].found += 1
            else:
                problems.append(f"MISS  {path.name}:{e.line + 1}: expected {e.code or e.category}")
        for f in findings:
            scores[f.category].reported += 1
            if any(e.matches(f) for e in expected):
                scores[f.category].correct += 1
            else:
                problems.append(f"FALSE {path.name}:{f.line + 1}:{f.column + 1}: {f.code} {f.message[:100]}")
    return scores, problems


def report(title: str, corpus: Path, gated: bool) -> bool:
    """Print one corpus's score; True when every category meets the targets."""
    scores, problems = evaluate(corpus)
    print(f"{title}: {len(list(corpus.glob('*.cu')))} kernels in {corpus}")
    print(f"{'category':<14} {'expected':>8} {'found':>6} {'reported':>8} {'recall':>7} {'precision':>9}")
    ok = True
    for cat in STATIC_CATEGORIES:
        s = scores[cat]
        good = s.recall >= RECALL_TARGET and s.precision >= PRECISION_TARGET and s.expected > 0
        ok &= good
        print(f"{cat:<14} {s.expected:>8} {s.found:>6} {s.reported:>8} {s.recall:>7.1%} "
              f"{s.precision:>9.1%}{'' if good else '  BELOW TARGET'}")
    for p in problems:
        print(p)
    targets = f"recall >= {RECALL_TARGET:.0%}, precision >= {PRECISION_TARGET:.0%}"
    verdict = "PASS" if ok else f"FAIL (targets: {targets})"
    print(verdict if gated else f"{verdict} - a measurement, not part of the exit code")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, help="score only this corpus")
    parser.add_argument("--corpus", dest="corpus_opt", type=Path, metavar="DIR",
                        help="score only this corpus")
    args = parser.parse_args(argv)
    only = args.corpus_opt or args.corpus
    if only is not None:
        if not only.is_dir():
            print(f"eval_corpus: {only} is not a directory")
            return 2
        held_out = only.resolve() == HELD_OUT.resolve()
        ok = report("held-out corpus" if held_out else "corpus", only, gated=not held_out)
        return 0 if ok or held_out else 1
    ok = report("project corpus", CORPUS, gated=True)
    if HELD_OUT.is_dir():
        print()
        report("held-out corpus", HELD_OUT, gated=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
