"""Which inputs the static analyses can take on within their time budget.

tree-sitter parses anything, but the analyses' walks and query captures grow faster than the
text on some shapes: a single statement of a hundred thousand terms (a tree that deep) took
minutes, a 5 MB file seconds per keystroke. Such an input is told apart by a few scans of the
text at C speed, before any parse, and skipped with one finding that says why; an editor keeps
answering and everything else (intents, markers, the compiler) goes on."""
from __future__ import annotations

import operator
import re
from array import array
from dataclasses import dataclass
from itertools import accumulate, islice, repeat

MAX_BYTES = 1_000_000          # UTF-8 bytes of the whole file
MAX_STATEMENT = 20_000         # characters between two of `;` `{` `}` (one expression's length)
MAX_NESTING = 256              # brackets open at once
_STATEMENT_BREAK = re.compile(r"[;{}]")
_BLANKS = re.compile(r"\s*")
_NOT_BRACKET = re.compile(r"[^(){}\[\]]+")
_BRACKET = re.compile(r"[(){}\[\]]")
_STEP = bytes.maketrans(b"([{)]}", b"\x01\x01\x01\xff\xff\xff")     # +1 / -1 as signed bytes


@dataclass(frozen=True)
class OverBudget:
    line: int          # 0-based line where the trouble is (the file's first line for its size)
    reason: str        # "...: the static analysis was skipped"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


def _deepest(text: str) -> tuple[int, int]:
    """(deepest bracket nesting, offset where it is reached); brackets in comments and strings
    count too, which errs on the side of skipping. In C loops: a file has ~10^5 brackets."""
    steps = array("b", _NOT_BRACKET.sub("", text).encode("ascii").translate(_STEP))
    if not steps:
        return 0, 0
    depths = list(accumulate(steps))
    # A close with nothing open is ignored: the nesting is the depth above the lowest so far.
    lowest = map(min, accumulate(depths, min), repeat(0))
    nesting = list(map(operator.sub, depths, lowest))
    deepest = max(nesting)
    if deepest <= MAX_NESTING:
        return deepest, 0
    index = nesting.index(deepest)
    match = next(islice(_BRACKET.finditer(text), index, None))
    return deepest, match.end()


def over_budget(text: str) -> OverBudget | None:
    """Why the static analyses should skip `text`, or None when they can run."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        return OverBudget(0, f"the file is {size / 1e6:.1f} MB, over the {MAX_BYTES / 1e6:g} MB the "
                             "static analysis takes on")
    start = longest = longest_at = 0
    for m in _STATEMENT_BREAK.finditer(text):
        if m.start() - start > longest:
            longest, longest_at = m.start() - start, start
        start = m.end()
    if len(text) - start > longest:
        longest, longest_at = len(text) - start, start
    if longest > MAX_STATEMENT:
        return OverBudget(_line_of(text, _BLANKS.match(text, longest_at).end()),
                          f"one statement here is {longest:,} characters long, over the "
                          f"{MAX_STATEMENT:,} the static analysis takes on")
    deepest, at = _deepest(text)
    if deepest > MAX_NESTING:
        return OverBudget(_line_of(text, at),
                          f"brackets nest {deepest:,} deep here, over the {MAX_NESTING} the static "
                          "analysis takes on")
    return None
