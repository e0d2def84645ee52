"""Tokens of the tensor form, each with its character range in the intent text."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import IntentError


@dataclass(frozen=True)
class Token:
    kind: str      # "name" | "number" | "string" | "op" | "sep" | "end"
    text: str
    start: int
    end: int


_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\f\v]+)
  | (?P<sep>[;\n])
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>'[^'\n]*'|"[^"\n]*")
  | (?P<op>\*\*|<=|>=|==|!=|[@*/+\-()\[\],:=.<>&|~])
""", re.VERBOSE)


def tokenize(text: str) -> list[Token]:
    """All tokens of `text`. A newline inside brackets is whitespace, not a statement break."""
    tokens: list[Token] = []
    depth = 0
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise IntentError(f"unexpected character {text[pos]!r}", pos, pos + 1)
        kind = m.lastgroup or "space"
        pos = m.end()
        if kind == "space" or (kind == "sep" and m.group() == "\n" and depth > 0):
            continue
        if kind == "op" and m.group() in "([":
            depth += 1
        elif kind == "op" and m.group() in ")]":
            depth = max(depth - 1, 0)
        tokens.append(Token(kind, m.group(), m.start(), m.end()))
    tokens.append(Token("end", "", len(text), len(text)))
    return tokens
