"""Building findings: ranges from tree nodes, severity and category from the code table."""
from __future__ import annotations

import re
from typing import Any

from tree_sitter import Node

from .codes import CODES
from .findings import Finding, Fix, TextEdit
from .syntax import Source


def finding(src: Source, node: Node, code: str, message: str, *, fix: Fix | None = None,
            data: dict[str, Any] | None = None) -> Finding:
    info = CODES[code]
    l0, c0, l1, c1 = src.span(node)
    return Finding(src.path, l0, c0, l1, c1, info.category, code, info.severity, message,
                   fix=fix, data=dict(data or {}))


def replace(src: Source, node: Node, new_text: str) -> TextEdit:
    l0, c0, l1, c1 = src.span(node)
    return TextEdit(l0, c0, l1, c1, new_text)


def insert_at(src: Source, row: int, byte_col: int, new_text: str) -> TextEdit:
    col = src.column(row, byte_col)
    return TextEdit(row, col, row, col, new_text)


LINE_MARK = "\x1f"       # brackets a 0-based row inside a message until it is rendered
_LINE_REF = re.compile(f"{LINE_MARK}(-?\\d+){LINE_MARK}")


def line_of(node: Node) -> str:
    """A reference to the node's line for a message. Messages are cached per function and the
    function may move, so the row stays symbolic until `render_lines` writes it 1-based."""
    return f"{LINE_MARK}{node.start_point[0]}{LINE_MARK}"


def shift_lines(message: str, rows: int) -> str:
    return _LINE_REF.sub(lambda m: f"{LINE_MARK}{int(m.group(1)) + rows}{LINE_MARK}", message)


def render_lines(message: str) -> str:
    return _LINE_REF.sub(lambda m: str(int(m.group(1)) + 1), message)
