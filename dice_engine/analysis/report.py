"""Building findings: ranges from tree nodes, severity and category from the code table."""
from __future__ import annotations

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


def line_of(node: Node) -> int:
    """1-based line, for messages."""
    return node.start_point[0] + 1
