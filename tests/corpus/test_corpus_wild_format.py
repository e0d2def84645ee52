"""The held-out corpus (tests/corpus_wild) keeps the shape its README promises: every file is
either clean (`expect: none`) or annotated, states its block shape at a literal launch, defines
no `main` (the confirmation harness supplies one), and the counts stay at or above the issue's."""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HELD_OUT = ROOT / "tests" / "corpus_wild"


def _eval_corpus():
    if "eval_corpus" not in sys.modules:
        spec = importlib.util.spec_from_file_location("eval_corpus", ROOT / "scripts" / "eval_corpus.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["eval_corpus"] = module        # dataclasses look their module up here
        spec.loader.exec_module(module)
    return sys.modules["eval_corpus"]


def test_every_file_is_clean_or_annotated_launched_and_without_main() -> None:
    expectations = _eval_corpus().expectations
    bad = []
    for path in sorted(HELD_OUT.glob("*.cu")):
        text = path.read_text()
        expected, none = expectations(path)
        if none == bool(expected):
            bad.append(f"{path.name}: needs exactly one of `expect: none` and expectations")
        if "<<<" not in text:
            bad.append(f"{path.name}: no literal launch site")
        if re.search(r"\bint\s+main\s*\(", text):
            bad.append(f"{path.name}: defines main")
    assert not bad, bad


def test_corpus_size_and_defect_counts() -> None:
    expectations = _eval_corpus().expectations
    files = sorted(HELD_OUT.glob("*.cu"))
    per_file = [expectations(p)[0] for p in files]
    defective = [e for e in per_file if e]
    categories = {e.category for es in per_file for e in es}
    assert len(files) >= 45 and len(defective) >= 28 and sum(map(len, defective)) >= 32
    assert categories == set(_eval_corpus().STATIC_CATEGORIES)
