"""Merging static findings with dynamic ones (compute-sanitizer, Nsight Compute).

A dynamic finding at a static finding's site (same file, its line inside the static range, same
category) confirms it: the static finding is kept, marked `confirmed`, and its message says by
what; the dynamic twin is dropped. Dynamic findings without a twin are reported as they are."""
from __future__ import annotations

from dataclasses import replace

from .findings import Finding

_TOOL = {"sanitizer": "compute-sanitizer", "profiler": "Nsight Compute"}


def merge(static: list[Finding], dynamic: list[Finding]) -> list[Finding]:
    merged = [replace(f, data=dict(f.data)) for f in static]
    unmatched: list[Finding] = []
    for d in dynamic:
        twin = next((s for s in merged if _same_site(s, d)), None)
        if twin is None:
            unmatched.append(d)
            continue
        tool = _TOOL.get(d.source, d.source)
        if not twin.confirmed:
            twin.confirmed = True
            twin.message = f"{twin.message} Confirmed at run time by {tool}: {d.message}"
        twin.data.setdefault("confirmed_by", []).append(d.source)
    out = merged + unmatched
    out.sort(key=lambda f: (f.file, f.line, f.column, f.code))
    return out


def _same_site(s: Finding, d: Finding) -> bool:
    return (s.file == d.file and s.category == d.category and s.source in ("static", "compiler")
            and s.line <= d.line <= s.end_line)
