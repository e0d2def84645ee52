"""Findings computed for an older version of a document, moved through the edits made since.

A compile takes a second; a static pass a few milliseconds; the GPU check on save minutes. Until
they catch up, what they found is still published, but at the lines where that text is now: a
finding on lines an edit did not touch moves by the lines the edit added or removed, a finding
on a line an edit touched is withheld until it is recomputed."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable

from lsprotocol import types

from dice_engine.analysis.findings import Finding

_BREAK = re.compile(r"\r\n|\r|\n")
MAX_EDITS = 4096      # edits remembered per document; findings older than that are withheld


@dataclass(frozen=True)
class LineEdit:
    version: int        # the document version this edit produced
    start: int          # first and last line the edit's range touches (old lines)
    end: int
    delta: int          # lines added (negative: removed)
    keeps_end: bool     # the old line `end` survives intact, as line `end + delta`


OPAQUE_END = 1 << 62   # an edit whose extent is not known: everything from its start is withheld


class EditLog:
    """The line edits of one document since it was opened (the latest MAX_EDITS of them)."""

    def __init__(self, version: int, line_count: int) -> None:
        self._edits: list[LineEdit] = []
        self._oldest = version              # findings of versions before this cannot be moved
        self._line_count = line_count

    def record(self, version: int, changes: list[types.TextDocumentContentChangeEvent],
               line_count: int) -> None:
        """The changes of one didChange (already applied; the document now has `line_count`
        lines). Their line deltas are checked against that count: a "\r" and a "\n" that an
        edit joins into one line break (or splits) make the edit opaque."""
        edits = []
        for change in changes:
            if not isinstance(change, types.TextDocumentContentChangePartial):
                self._edits.clear()           # the whole text was replaced: nothing older maps
                self._oldest, self._line_count = version, line_count
                return
            start, end = change.range.start, change.range.end
            if (end.line, end.character) < (start.line, start.character):
                start, end = end, start
            text = change.text
            # Line `end` keeps its text, only moved, when the edit removes none of it and what
            # comes before it ends with a line break (or at the start of a line).
            keeps_end = end.character == 0 and (text.endswith(("\n", "\r"))
                                                 or (not text and start.character == 0))
            edits.append(LineEdit(version, start.line, end.line,
                                  len(_BREAK.findall(text)) - (end.line - start.line), keeps_end))
        if sum(e.delta for e in edits) != line_count - self._line_count:
            first = min(e.start for e in edits)
            edits = [LineEdit(version, first, OPAQUE_END, 0, False)]
        self._line_count = line_count
        self._edits += edits
        if len(self._edits) > MAX_EDITS:
            self._oldest = self._edits[-MAX_EDITS - 1].version
            self._edits = self._edits[-MAX_EDITS:]
    def moved_line(self, line: int, since: int) -> int | None:
        """Where line `line` of version `since` is now; None when an edit since touched it (or
        the edits since are no longer known)."""
        if since < self._oldest:
            return None
        for edit in self._edits:
            if edit.version <= since or line < edit.start:
                continue
            if line > edit.end or (line == edit.end and edit.keeps_end):
                line += edit.delta
                continue
            return None
        return line

    def moved(self, findings: Iterable[Finding], since: int | None) -> list[Finding]:
        """`findings`, computed for version `since`, at their lines in the latest version;
        those on lines edited since are left out."""
        if since is None or (self._oldest is not None and since < self._oldest):
            return []
        edits = [e for e in self._edits if e.version > since]
        if not edits:
            return list(findings)
        out = []
        for finding in findings:
            line, end_line = finding.line, finding.end_line
            for edit in edits:
                if end_line < edit.start:
                    continue
                if line > edit.end or (line == edit.end and edit.keeps_end):
                    line, end_line = line + edit.delta, end_line + edit.delta
                    continue
                break
            else:
                moved = finding if line == finding.line else replace(finding, line=line, end_line=end_line)
                out.append(moved)
        return out
