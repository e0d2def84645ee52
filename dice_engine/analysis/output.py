"""Findings as text (one line each, compiler style), JSON (design.md §3) and SARIF 2.1.0."""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .codes import CODES
from .findings import Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def to_text(findings: Iterable[Finding]) -> str:
    lines = []
    for f in findings:
        tag = " (confirmed)" if f.confirmed else ""
        lines.append(f"{f.file}:{f.line + 1}:{f.column + 1}: {f.severity}: {f.message} "
                     f"[{f.code} {f.category}, {f.source}{tag}]")
    return "\n".join(lines) + ("\n" if lines else "")


def to_json(findings: Iterable[Finding]) -> str:
    return json.dumps([f.to_json() for f in findings], ensure_ascii=False, indent=2)


def to_sarif(findings: Iterable[Finding], *, tool_version: str = "0.1.0") -> str:
    findings = list(findings)
    rules = [{"id": code, "name": info.title.replace(" ", ""),
              "shortDescription": {"text": info.title},
              "helpUri": info.doc_path(code),
              "defaultConfiguration": {"level": _SARIF_LEVEL[info.severity]},
              "properties": {"category": info.category}}
             for code, info in CODES.items()]
    # codes from other tables (the runner's dynamic D-series) get a minimal rule of their own
    for f in findings:
        if f.code not in CODES and all(r["id"] != f.code for r in rules):
            rules.append({"id": f.code, "shortDescription": {"text": f"{f.category} ({f.source})"},
                          "helpUri": f"docs/codes/{f.code}.md", "properties": {"category": f.category}})
    index = {r["id"]: i for i, r in enumerate(rules)}
    results: list[dict[str, Any]] = []
    for f in findings:
        result: dict[str, Any] = {
            "ruleId": f.code,
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f.file},
                "region": {"startLine": f.line + 1, "startColumn": f.column + 1,
                           "endLine": f.end_line + 1, "endColumn": f.end_column + 1}}}],
            "properties": {"category": f.category, "source": f.source, "confirmed": f.confirmed},
        }
        result["ruleIndex"] = index[f.code]
        if f.fix is not None:
            result["fixes"] = [{"description": {"text": f.fix.title}, "artifactChanges": [{
                "artifactLocation": {"uri": f.file},
                "replacements": [{"deletedRegion": {"startLine": e.line + 1, "startColumn": e.column + 1,
                                                    "endLine": e.end_line + 1, "endColumn": e.end_column + 1},
                                  "insertedContent": {"text": e.new_text}} for e in f.fix.edits]}]}]
        results.append(result)
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "DICE", "version": tool_version,
                            "informationUri": "https://github.com/dice-cuda/dice", "rules": rules}},
        "columnKind": "unicodeCodePoints",
        "results": results}]}
    return json.dumps(log, ensure_ascii=False, indent=2)
