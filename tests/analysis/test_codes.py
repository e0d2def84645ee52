"""One code table: every DICE-<letter><3 digits> the sources (engine, runner, server, scripts)
mention is in `dice_engine.analysis.codes.CODES` and has its page; nothing else defines codes."""
from __future__ import annotations

import re
from pathlib import Path

from dice_engine.analysis.codes import CODES

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("dice_engine", "server", "scripts", "editors")
CODE = re.compile(r"DICE-[A-Z]\d{3}")


def _codes_in_sources() -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    for folder in SOURCE_DIRS:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".lua", ".ts", ".js", ".json") and path.is_file():
                for code in CODE.findall(path.read_text(errors="replace")):
                    used.setdefault(code, set()).add(str(path.relative_to(ROOT)))
    return used


def test_every_code_the_sources_use_is_in_the_table_and_has_a_page():
    used = _codes_in_sources()
    assert {"DICE-S001", "DICE-D001", "DICE-I001", "DICE-E001"} <= set(used)   # the scan sees each series
    missing = {code: sorted(files) for code, files in used.items() if code not in CODES}
    assert not missing
    assert all((ROOT / CODES[code].doc_path(code)).is_file() for code in used)


def test_every_page_belongs_to_a_code_of_the_table():
    pages = {p.stem for p in (ROOT / "docs" / "codes").glob("DICE-*.md")}
    assert pages == set(CODES)


def test_runner_and_server_take_their_codes_from_the_table():
    """No second table: runner and server modules do not define CodeInfo entries of their own."""
    for folder in ("dice_engine/runner", "server"):
        for path in (ROOT / folder).rglob("*.py"):
            assert "CodeInfo(" not in path.read_text(), path


def test_the_rule_registry_and_the_code_table_agree():
    from dice_engine.analysis.codes import STATIC_CATEGORIES, categories
    from dice_engine.analysis.findings import CATEGORIES
    from dice_engine.analysis.registry import RULES
    claimed = [code for rule in RULES for code in rule.codes]
    static = [code for code, info in CODES.items() if info.origin == "static"]
    assert sorted(claimed) == sorted(static)            # each static code belongs to exactly one rule
    origins = {info.origin for info in CODES.values()}
    assert origins == {"static", "compiler", "editor", "sanitizer", "profiler"}
    assert CATEGORIES == categories() and set(CATEGORIES) == {i.category for i in CODES.values()}
    assert STATIC_CATEGORIES == ("sync", "race", "coalescing", "bank-conflict", "precision", "overflow",
                                 "bounds", "resources")
