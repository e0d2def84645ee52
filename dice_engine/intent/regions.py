"""Generated-region markers (design.md §2): their format, hashes, rendering and the one edit
that writes a region.

    // @dice-begin <intent-hash> <summary> [body <body-hash>]
    ... generated code ...
    // @dice-end

The intent hash (12 hex) is taken over the whitespace-normalized intent text, so re-wrapping
an intent does not make its region stale. The body hash (8 hex) is taken over the body with
line endings normalized, so a CRLF checkout does not count as a hand edit.
"""
from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..analysis.findings import TextEdit
    from .locate import IntentSite

BEGIN = re.compile(r"^(?P<indent>[ \t]*)//\s*@dice-begin\b(?P<rest>.*)$")
END = re.compile(r"^[ \t]*//\s*@dice-end\b")
_BEGIN_FIELDS = re.compile(r"^\s+(?P<hash>[0-9a-f]{12})(?:\s+(?P<summary>.*?))??"
                           r"(?:\s*\[body (?P<body>[0-9a-f]{8})\])?\s*$")
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def intent_hash(text: str) -> str:
    """12 hex digits identifying an intent, insensitive to how it is spaced and wrapped."""
    return hashlib.sha1(" ".join(text.split()).encode("utf-8", "surrogatepass")).hexdigest()[:12]


def body_lines(body: str) -> list[str]:
    """The lines of a region body (one trailing line break is not an extra empty line)."""
    lines = LINE_BREAK.split(body)
    return lines[:-1] if lines and lines[-1] == "" else lines


def body_hash(lines: list[str]) -> str:
    return hashlib.sha1("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()[:8]


def intact_prefix(lines: list[str], recorded: str) -> int | None:
    """The number of leading `lines` (fewer than all) whose body hash is `recorded`: the region
    as generated is still there, followed by lines that were never part of it (its @dice-end
    line was deleted and the region now reaches a later one). None when there is no such prefix."""
    digest = hashlib.sha1()
    for count in range(1, len(lines)):
        if count > 1:
            digest.update(b"\n")
        digest.update(lines[count - 1].encode("utf-8", "surrogatepass"))
        if digest.hexdigest()[:8] == recorded:
            return count
    return None


def parse_begin(rest: str) -> tuple[str, str, str | None] | None:
    """(intent hash, summary, body hash or None) from what follows `@dice-begin`, or None if malformed."""
    m = _BEGIN_FIELDS.match(rest)
    if m is None:
        return None
    return m.group("hash"), (m.group("summary") or "").strip(), m.group("body")


def render_region(intent_hash: str, summary: str, body: str, newline: str = "\n", indent: str = "") -> str:
    """Marker lines around `body`, each line ended by `newline` (the last one included)."""
    lines = body_lines(body)
    summary = " ".join(summary.split())
    head = f"{indent}// @dice-begin {intent_hash}" + (f" {summary}" if summary else "")
    begin = f"{head} [body {body_hash(lines)}]"
    return newline.join([begin, *lines, f"{indent}// @dice-end"]) + newline


def split_lines(source: str) -> tuple[list[str], list[str]]:
    """The lines of `source` (as an LSP client counts them) and each line's terminator ('' for the last)."""
    lines: list[str] = []
    ends: list[str] = []
    pos = 0
    for m in LINE_BREAK.finditer(source):
        lines.append(source[pos:m.start()])
        ends.append(m.group())
        pos = m.end()
    lines.append(source[pos:])
    ends.append("")
    return lines, ends


def dominant_newline(source: str) -> str:
    crlf = source.count("\r\n")
    return "\r\n" if crlf and crlf >= source.count("\n") - crlf else "\n"


def region_edit(source: str, site: IntentSite, body: str, summary: str) -> TextEdit:
    """The single edit that writes `site`'s region: replacing the marker block (markers included)
    when there is one, else inserting one right below the intent's last line."""
    # Imported here: the analysis package is heavy and may itself use the intent front-end.
    from ..analysis.findings import TextEdit

    if site.region is not None and site.region.missing_end is not None:
        raise ValueError("the region's @dice-end line is missing; it cannot be written safely")
    lines, ends = split_lines(source)
    newline = dominant_newline(source)
    indent = re.match(r"[ \t]*", lines[site.line]).group()
    block = render_region(site.hash, summary, body, newline, indent)
    if site.region is not None:
        last = site.region.end_line
        return TextEdit(site.region.begin_line, 0, last, len(lines[last]), block[:-len(newline)])
    last = site.end_line
    if ends[last]:
        return TextEdit(last + 1, 0, last + 1, 0, block)
    return TextEdit(last, len(lines[last]), last, len(lines[last]), newline + block[:-len(newline)])


def apply_edit(source: str, edit: TextEdit) -> str:
    """`source` with `edit` applied (positions in code points, lines as `split_lines` counts them)."""
    lines, ends = split_lines(source)

    def offset(line: int, column: int) -> int:
        return sum(len(t) + len(e) for t, e in zip(lines[:line], ends[:line])) + column

    start, end = offset(edit.line, edit.column), offset(edit.end_line, edit.end_column)
    return source[:start] + edit.new_text + source[end:]
