"""Engine records (0-based lines, code-point columns) to LSP types (client position units)."""
from __future__ import annotations

from typing import Sequence

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from dice_engine.analysis.findings import Finding, TextEdit

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

    def range(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        last = max(len(self._lines) - 1, 0)
        start = ServerTextPosition(min(max(line, 0), last + 1), max(column, 0))
        end = ServerTextPosition(min(max(end_line, 0), last + 1), max(end_column, 0))
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
