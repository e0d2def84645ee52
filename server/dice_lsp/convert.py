"""Engine records (0-based lines, code-point columns) to LSP types (client position units)."""
from __future__ import annotations

from typing import Sequence

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from dice_engine.analysis.findings import Finding, TextEdit

from .sync import content

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


class Positions:
    """Converts server ranges for one snapshot of a document (its lines split once)."""

    def __init__(self, doc: TextDocument) -> None:
        self._codec = doc.position_codec
        self._lines: Sequence[str] = doc.lines

    def position(self, line: int, column: int) -> ServerTextPosition:
        """A position inside the document: past the last line is the end of the text, past
        the end of a line is the end of that line (a finding can never point elsewhere)."""
        if not self._lines:
            return ServerTextPosition(0, 0)
        last = len(self._lines) - 1
        if line > last:
            line, column = last, len(self._lines[last])
        line = max(line, 0)
        return ServerTextPosition(line, min(max(column, 0), len(content(self._lines[line]))))

    def range(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        start, end = self.position(line, column), self.position(end_line, end_column)
        if (end.line, end.character) < (start.line, start.character):
            end = start
        return self._codec.range_to_client_units(self._lines, ServerTextRange(start, end))

    def text_edit(self, edit: TextEdit) -> types.TextEdit:
        return types.TextEdit(range=self.range(edit.line, edit.column, edit.end_line, edit.end_column),
                              new_text=edit.new_text)

    def diagnostic(self, finding: Finding) -> types.Diagnostic:
        return types.Diagnostic(
            range=self.range(finding.line, finding.column, finding.end_line, finding.end_column),
            severity=SEVERITY[finding.severity],
            code=finding.code,
            source=f"dice.{finding.source}",
            message=finding.message,
            data={"category": finding.category, "fix": finding.fix is not None},
        )

    def server_position(self, position: types.Position) -> tuple[int, int]:
        pos = self._codec.position_from_client_units(self._lines, position)
        return pos.line, pos.character
