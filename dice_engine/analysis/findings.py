"""The finding record shared by static analyses, the compiler wrapper, the GPU runner, the CLI
and the language server, and its JSON form (design.md §3).

Positions are 0-based lines and 0-based columns counted in Unicode code points; `to_json`
produces the 1-based form of the contract. The server converts columns to UTF-16 itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .codes import categories

CATEGORIES = categories()           # every category of the code table, in its order
SEVERITIES = ("error", "warning", "information", "hint")
SOURCES = ("static", "compiler", "sanitizer", "profiler")


@dataclass(frozen=True)
class TextEdit:
    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[TextEdit, ...]


@dataclass
class Finding:
    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    category: str
    code: str
    severity: str
    message: str
    source: str = "static"
    fix: Fix | None = None
    confirmed: bool = False                    # a static finding seen again by sanitizer/profiler
    data: dict[str, Any] = field(default_factory=dict)   # figures behind the message (degree, stride, ...)

    def __post_init__(self) -> None:
        assert self.category in CATEGORIES, self.category
        assert self.severity in SEVERITIES, self.severity
        assert self.source in SOURCES, self.source

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line + 1, "column": self.column + 1,
                "end_line": self.end_line + 1, "end_column": self.end_column + 1,
                "category": self.category, "code": self.code, "severity": self.severity,
                "message": self.message, "source": self.source}
