"""Positions in code points, JSON/SARIF/text output, and merging with dynamic findings."""
from __future__ import annotations

import json

from dice_engine.analysis import Finding, check_source, merge
from dice_engine.analysis.codes import CODES
from dice_engine.analysis.output import to_json, to_sarif, to_text

SRC = "__global__ void k(float* y) { /* ÄÖ→ */ y[threadIdx.x] *= 0.5; }\n"


def test_columns_are_code_points_not_bytes():
    (f,) = check_source(SRC, "k.cu")
    start = SRC.index("0.5")
    assert (f.line, f.column, f.end_column) == (0, start, start + 3)
    assert f.fix.edits[0].column == start


def test_json_is_the_design_format_with_one_based_positions():
    (item,) = json.loads(to_json(check_source(SRC, "k.cu")))
    assert set(item) == {"file", "line", "column", "end_line", "end_column", "category", "code",
                         "severity", "message", "source"}
    assert item["line"] == 1 and item["column"] == SRC.index("0.5") + 1
    assert item["code"] == "DICE-P001" and item["source"] == "static"


def test_sarif_has_rules_with_help_pages_and_one_based_regions():
    log = json.loads(to_sarif(check_source(SRC, "k.cu")))
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(CODES)
    assert all(r["helpUri"] == f"docs/codes/{r['id']}.md" for r in rules)
    (result,) = run["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 1 and region["startColumn"] == SRC.index("0.5") + 1
    assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == "DICE-P001"
    assert result["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "0.5f"


def test_sarif_gives_codes_outside_the_table_a_rule_too():
    dynamic = _dynamic(0, "race")
    run = json.loads(to_sarif([dynamic]))["runs"][0]
    (result,) = run["results"]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "DICE-D001"


def test_text_output_is_one_line_per_finding():
    text = to_text(check_source(SRC, "k.cu"))
    assert text.startswith(f"k.cu:1:{SRC.index('0.5') + 1}: warning: ") and text.count("\n") == 1
    assert to_text([]) == ""


def _dynamic(line: int, category: str, source: str = "sanitizer") -> Finding:
    return Finding("k.cu", line, 0, line, 10, category, "DICE-D001", "error",
                   f"{category} hazard seen at run time", source=source)


def test_merge_confirms_static_twins_and_keeps_unmatched_dynamic_findings():
    src = """\
__global__ void k(float* x) {
    __shared__ float s[257];
    s[threadIdx.x] = x[threadIdx.x];
    x[threadIdx.x] = s[threadIdx.x + 1];
}
"""
    static = check_source(src, "k.cu")
    (race,) = [f for f in static if f.category == "race"]
    merged = merge(static, [_dynamic(3, "race"), _dynamic(2, "sync"), _dynamic(3, "coalescing", "profiler")])
    confirmed = [f for f in merged if f.confirmed]
    assert [f.code for f in confirmed] == [race.code]
    assert "Confirmed at run time by compute-sanitizer" in confirmed[0].message
    assert not race.confirmed                       # inputs are not modified
    assert sorted((f.source, f.category) for f in merged if f.source != "static") == [
        ("profiler", "coalescing"), ("sanitizer", "sync")]
