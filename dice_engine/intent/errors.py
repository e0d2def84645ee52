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
    """' — did you mean X?' for the closest of `choices`, or ''."""
    close = difflib.get_close_matches(word.lower(), sorted(set(choices)), n=1, cutoff=0.6)
    return f" — did you mean {close[0]}?" if close else ""
