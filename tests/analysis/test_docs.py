"""Every diagnostic code has its documentation page (what, why, example, fix)."""
from __future__ import annotations

from pathlib import Path

import pytest

from dice_engine.analysis.codes import CODES
from dice_engine.analysis.findings import CATEGORIES, SEVERITIES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "codes"


@pytest.mark.parametrize("code", list(CODES))
def test_code_has_a_page_with_every_section(code):
    info = CODES[code]
    assert info.category in CATEGORIES and info.severity in SEVERITIES
    page = (DOCS / f"{code}.md").read_text()
    assert page.startswith(f"# {code}: {info.title}\n")
    for section in ("## What", "## Why it matters at run time", "## Example", "## Fix"):
        assert section in page
    assert f"`{info.category}`" in page and info.doc_path(code) == f"docs/codes/{code}.md"


def test_index_lists_every_code():
    index = (DOCS / "README.md").read_text()
    assert all(f"[{code}]({code}.md)" in index for code in CODES)
