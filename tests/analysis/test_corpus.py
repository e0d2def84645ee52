"""The corpus score: per-category recall >= 90% and precision >= 95% (scripts/eval_corpus.py)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _eval_module():
    if "eval_corpus" not in sys.modules:
        spec = importlib.util.spec_from_file_location("eval_corpus", ROOT / "scripts" / "eval_corpus.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["eval_corpus"] = module        # dataclasses look their module up here
        spec.loader.exec_module(module)
    return sys.modules["eval_corpus"]


def test_corpus_has_enough_kernels_for_every_category():
    ev = _eval_module()
    files = sorted(ev.CORPUS.glob("*.cu"))
    assert len(files) >= 60
    expected = {cat: 0 for cat in ev.STATIC_CATEGORIES}
    clean = 0
    for path in files:
        exps, none = ev.expectations(path)
        clean += none
        for e in exps:
            expected[e.category] += 1
    assert clean >= 15
    assert all(n >= 5 for n in expected.values()), expected


def test_corpus_meets_recall_and_precision_targets(capsys):
    ev = _eval_module()
    status = ev.main([])
    out = capsys.readouterr().out
    assert status == 0, out


def test_annotation_parser_rejects_unknown_categories(tmp_path):
    ev = _eval_module()
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k() {}  // expect: raceway\n")
    with pytest.raises(ValueError, match="unknown expectation"):
        ev.expectations(bad)


def test_annotation_forms(tmp_path):
    ev = _eval_module()
    f = tmp_path / "forms.cu"
    f.write_text("// expect: race@3, DICE-P001@2\nint a;\nint b;  // expect: sync\n")
    exps, none = ev.expectations(f)
    assert not none
    assert sorted((e.line, e.category, e.code) for e in exps) == [
        (1, "precision", "DICE-P001"), (2, "race", None), (2, "sync", None)]
