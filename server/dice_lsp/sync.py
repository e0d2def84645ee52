"""The server's copy of each open document, split into lines exactly as the LSP counts them.

pygls splits with `str.splitlines`, which also breaks at form feed, U+2028, U+0085 and other
characters the protocol does not treat as line ends (only `\\n`, `\\r\\n` and `\\r`). One such
character inside a line shifts every later line by one on the server, and each incremental edit
then lands on the wrong line. This document keeps its lines (each with its terminator, the last
one possibly empty) and applies incremental changes to them directly.
"""
from __future__ import annotations

import re
from typing import Any, Optional, Sequence

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_TERMINATOR = re.compile(r"(?:\r\n|\r|\n)$")


def split_keep_ends(text: str) -> list[str]:
    """The lines of `text`, each with its terminator; the last one is empty when `text` ends
    with a line break (the protocol counts that line too)."""
    lines = _LINE.findall(text)
    if not lines or _TERMINATOR.search(lines[-1]):
        lines.append("")
    return lines


def content(line: str) -> str:
    """A line without its terminator."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


def column_from_units(line: str, units: int, encoding: Any) -> int:
    """The code-point column of a client position `units` code units into `line` (its content,
    without terminator), clamped to the line's length as the protocol asks."""
    if units <= 0:
        return 0
    if line.isascii() or encoding == types.PositionEncodingKind.Utf32:
        return min(units, len(line))
    counted = 0
    for index, char in enumerate(line):
        if counted >= units:
            return index
        if encoding == types.PositionEncodingKind.Utf8:
            counted += len(char.encode("utf-8", "surrogatepass"))
        else:
            counted += 2 if ord(char) > 0xFFFF else 1
    return len(line)


class SyncedDocument(TextDocument):
    """A TextDocument whose `lines` and incremental changes follow the protocol's line ends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lines: list[str] | None = None

    @property
    def source(self) -> str:
        if self._source is None and self._lines is not None:
            self._source = "".join(self._lines)
        return super().source

    @property
    def lines(self) -> Sequence[str]:
        if self._lines is None:
            self._lines = split_keep_ends(self.source)
        return self._lines

    def _position(self, lines: list[str], position: types.Position) -> tuple[int, int]:
        """(line, code-point column) of a client position, clamped into the document."""
        if position.line >= len(lines):
            return len(lines) - 1, len(content(lines[-1]))
        line = content(lines[position.line])
        return position.line, column_from_units(line, position.character, self.position_codec.encoding)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        lines = list(self.lines)
        start = self._position(lines, change.range.start)
        end = self._position(lines, change.range.end)
        if end < start:
            start, end = end, start
        # Re-split one neighbouring line on each side as well: an edit can join a "\r" ending
        # one line with a "\n" starting the next into one "\r\n" (or split such a pair).
        first = max(start[0] - 1, 0)
        last = min(end[0] + 1, len(lines) - 1)
        head = "".join(lines[first:start[0]]) + lines[start[0]][:start[1]]
        tail = lines[end[0]][end[1]:] + "".join(lines[end[0] + 1:last + 1])
        middle = split_keep_ends(head + change.text + tail)
        if last < len(lines) - 1 and middle[-1] == "":
            middle.pop()           # the split's closing empty line is the next line's start
        lines[first:last + 1] = middle
        self._lines = lines
        self._source = None

    def _apply_full_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        super()._apply_full_change(change)
        self._lines = None


class SyncedWorkspace(Workspace):
    def _create_text_document(self, doc_uri: str, source: Optional[str] = None,
                              version: Optional[int] = None,
                              language_id: Optional[str] = None) -> TextDocument:
        return SyncedDocument(doc_uri, source=source, version=version, language_id=language_id,
                              sync_kind=self._sync_kind, position_codec=self.position_codec)


def synced(workspace: Workspace) -> SyncedWorkspace:
    """A SyncedWorkspace with the same root, folders and position encoding (made right after
    `initialize`, before any document is opened)."""
    return SyncedWorkspace(workspace.root_uri, workspace._sync_kind, list(workspace.folders.values()),
                           workspace.position_encoding)
