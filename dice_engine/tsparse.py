"""tree-sitter parses that let other threads run.

`Parser.parse(bytes)` holds the GIL for the whole parse (160 ms for a 1 MB file), so a parse on
a background thread stops the language server's event loop for as long. Handing the text over
in chunks through a read callback returns to Python between chunks, where the interpreter can
switch threads; the tree is the same and the parse no slower.

A tree parsed through a callback keeps no source, so each `Node.text` on it calls the callback
again (about 70 µs for a small node, against 0.3 µs on a tree parsed from bytes): the analyses
read `Node.text` tens of thousands of times per keystroke. So the chunked tree is handed once
more to `Parser.parse` with the bytes: nothing changed, every subtree is reused (a few ms for a
1 MB file, against the full parse's 160), and the tree returned keeps the bytes. A text small
enough that even its full parse is short is parsed from its bytes at once: for a keystroke's
incremental parse the second pass would cost more than the parse itself."""

from __future__ import annotations

from tree_sitter import Parser, Point, Tree

CHUNK = 16384  # bytes per read: a few milliseconds of parsing each
AT_ONCE = 8 * CHUNK  # up to this size a full parse holds the GIL for ~20 ms at most: no chunks


def parse_yielding(parser: Parser, data: bytes, old: Tree | None = None) -> Tree:
    if len(data) <= AT_ONCE:
        return parser.parse(data, old) if old is not None else parser.parse(data)

    def read(offset: int, _point: Point) -> bytes:
        return data[offset : offset + CHUNK]

    chunked = parser.parse(read, old) if old is not None else parser.parse(read)
    return parser.parse(data, chunked)
