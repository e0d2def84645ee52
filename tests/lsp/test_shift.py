"""Findings of an older version moved through the edits since, or withheld."""
from __future__ import annotations

from lsprotocol import types

from dice_engine.analysis.findings import Finding
from dice_lsp.shift import EditLog


def finding(line: int, end_line: int | None = None) -> Finding:
    return Finding(file="x.cu", line=line, column=2, end_line=line if end_line is None else end_line,
                   end_column=5, category="compile", code="DICE-E001", severity="error", message="m")


def change(l0: int, c0: int, l1: int, c1: int, text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(l0, c0), types.Position(l1, c1)), text=text)


def test_lines_inserted_above_move_a_finding_down():
    log = EditLog(1, 10)
    log.record(2, [change(0, 0, 0, 0, "a\nb\nc\n")], 13)
    (moved,) = log.moved([finding(2)], since=1)
    assert (moved.line, moved.end_line, moved.column) == (5, 5, 2)


def test_a_finding_on_an_edited_line_is_withheld_and_one_below_a_deletion_moves_up():
    log = EditLog(1, 10)
    log.record(2, [change(3, 1, 3, 4, "xyz")], 10)
    assert log.moved([finding(3)], since=1) == []
    log.record(3, [change(0, 0, 2, 0, "")], 8)
    assert [f.line for f in log.moved([finding(5), finding(0)], since=1)] == [3]


def test_an_edit_joining_cr_and_lf_makes_the_rest_of_the_file_unknown():
    log = EditLog(1, 5)
    log.record(2, [change(1, 0, 1, 0, "x\r")], 5)        # counted 1 break, the file gained none
    assert log.moved([finding(0), finding(3)], since=1) == [finding(0)]


def test_findings_older_than_the_open_are_withheld():
    log = EditLog(5, 10)
    assert log.moved([finding(1)], since=4) == []
    assert log.moved_line(1, since=5) == 1
