"""The one error the intent front-end raises, carrying the character range to underline."""
from __future__ import annotations

import difflib
from typing import Iterable


class IntentError(ValueError):
    """An intent that cannot be served. `start`/`end` are offsets into the intent text."""

    def __init__(self, message: str, start: int, end: int):
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = max(end, start)

    def __str__(self) -> str:
        return self.message


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' — did you mean X?' for the closest of `choices`, or ''. Choices much shorter than the
    word are left out: "topk" is not a misspelt "to"."""
    word = word.lower()
    plausible = sorted({c for c in choices if len(c) >= min(len(word) - 1, 3)})
    close = difflib.get_close_matches(word, plausible, n=1, cutoff=0.6)
    return f" — did you mean {close[0]}?" if close else ""
