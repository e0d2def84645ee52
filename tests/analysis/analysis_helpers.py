"""Small helpers shared by the analysis tests."""
from __future__ import annotations

from dice_engine.analysis.findings import Finding, Fix


def apply_fix(source: str, fix: Fix) -> str:
    """`source` with the fix's edits applied (edits do not overlap; applied back to front)."""
    lines = source.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    out = source
    for e in sorted(fix.edits, key=lambda e: (e.line, e.column), reverse=True):
        start = offsets[e.line] + e.column
        end = offsets[e.end_line] + e.end_column
        out = out[:start] + e.new_text + out[end:]
    return out


def codes(findings: list[Finding]) -> list[str]:
    return sorted(f.code for f in findings)


def at_line(findings: list[Finding], line: int) -> list[str]:
    """Codes of findings whose range covers the 1-based `line`."""
    return sorted(f.code for f in findings if f.line <= line - 1 <= f.end_line)
