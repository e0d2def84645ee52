"""The one error the intent front-end raises, carrying the character range to underline."""
from __future__ import annotations

import difflib
from typing import Iterable


class IntentError(ValueError):
    """An intent that cannot be served. `start`/`end` are offsets into the intent text;
    `suggestion`, when set, is what the underlined text should probably read (a quick fix)."""

    def __init__(self, message: str, start: int, end: int, suggestion: str | None = None):
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = max(end, start)
        self.suggestion = suggestion

    @classmethod
    def misspelt(cls, message: str, word: str, choices: Iterable[str], start: int, end: int,
                 otherwise: str = "") -> "IntentError":
        """`message` for the misspelt `word` at [start, end), with the closest choice as the
        suggestion (else `otherwise` appended)."""
        best = closest(word, choices)
        return cls(message + (f" — did you mean {best}?" if best else otherwise), start, end, best)

    def __str__(self) -> str:
        return self.message


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The closest of `choices` to `word`, or None. Choices much shorter than the word are left
    out: "topk" is not a misspelt "to"."""
    word = word.lower()
    plausible = sorted({c for c in choices if len(c) >= min(len(word) - 1, 3)})
    close = difflib.get_close_matches(word, plausible, n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' — did you mean X?' for the closest of `choices`, or ''."""
    best = closest(word, choices)
    return f" — did you mean {best}?" if best else ""
