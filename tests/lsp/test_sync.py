"""The server's document model against an independent one (offsets, LSP line ends, UTF-16)."""
from __future__ import annotations

import random
import re

from lsprotocol import types

from dice_lsp.sync import SyncedDocument, split_keep_ends

ALPHABET = ["a", "b", "\n", "\r", "\r\n", "\f", "\u2028", "\x85", "\U0001F600", "\u00e9", " "]


def reference_apply(text: str, change: types.TextDocumentContentChangePartial) -> str:
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def offset(position: types.Position) -> int:
        if position.line >= len(starts):
            return len(text)
        start = starts[position.line]
        end = starts[position.line + 1] if position.line + 1 < len(starts) else len(text)
        line, units = re.sub(r"(\r\n|\r|\n)$", "", text[start:end]), 0
        for index, char in enumerate(line):
            if units >= position.character:
                return start + index
            units += 2 if ord(char) > 0xFFFF else 1
        return start + len(line)

    a, b = sorted((offset(change.range.start), offset(change.range.end)))
    return text[:a] + change.text + text[b:]


def test_lines_end_only_at_lsp_line_breaks():
    assert split_keep_ends("a\fb\u2028c\x85d\r\ne\rf\n") == ["a\fb\u2028c\x85d\r\n", "e\r", "f\n", ""]
    assert split_keep_ends("") == [""]


def test_random_incremental_edits_match_an_independent_model():
    rng = random.Random(7)
    for _ in range(1500):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))
        doc = SyncedDocument("file:///x.cu", text, version=1)
        for _ in range(6):
            count = len(split_keep_ends(text))
            start = types.Position(rng.randint(0, count), rng.randint(0, 6))
            end = types.Position(rng.randint(start.line, count), rng.randint(0, 6))
            typed = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 4)))
            change = types.TextDocumentContentChangePartial(range=types.Range(start, end), text=typed)
            expected = reference_apply(text, change)
            doc.apply_change(change)
            text = expected
            assert doc.source == expected
            assert list(doc.lines) == split_keep_ends(expected)
