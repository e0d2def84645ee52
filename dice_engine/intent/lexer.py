"""Tokens of the tensor form, each with its character range in the intent text."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import IntentError


@dataclass(frozen=True)
class Token:
    kind: str      # "name" | "number" | "string" | "op" | "end"
    text: str
    start: int
    end: int


_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>'[^'\n]*'|"[^"\n]*")
  | (?P<op>\*\*|<=|>=|==|!=|[@*/+\-()\[\],:=.<>&|~])
""", re.VERBOSE)


def statement_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each statement, without surrounding whitespace; empty ones are dropped.

    `;` ends a statement anywhere outside quotes (an unclosed bracket then errs in its own
    statement); a line break only outside brackets, so a long expression may wrap."""
    spans: list[tuple[int, int]] = []
    depth, quote, begin = 0, "", 0
    for i, c in enumerate(text + "\n"):
        if quote:
            quote = "" if c in (quote, "\n") else quote
        elif c in "'\"":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth = max(depth - 1, 0)
        elif c in ";；" or (c == "\n" and (depth == 0 or i == len(text))):
            piece = text[begin:i]
            lead = len(piece) - len(piece.lstrip())
            if piece.strip():
                spans.append((begin + lead, begin + len(piece.rstrip())))
            begin = i + 1
    return spans


def tokenize(text: str, start: int = 0, end: int | None = None) -> list[Token]:
    """The tokens of `text[start:end]` (one statement), with offsets into `text`."""
    end = len(text) if end is None else end
    tokens: list[Token] = []
    pos = start
    while pos < end:
        m = _TOKEN.match(text, pos, end)
        if m is None:
            raise IntentError(f"unexpected character {text[pos]!r}", pos, pos + 1)
        pos = m.end()
        if m.lastgroup != "space":
            tokens.append(Token(m.lastgroup or "op", m.group(), m.start(), m.end()))
    return tokens
