"""Hover on a kernel name, a launch `<<<…>>>` or an intent (the text: kernel_info.py)."""
from __future__ import annotations

from lsprotocol import types

from ..convert import Positions
from ..kernel_info import hover_lines
from ..server import DiceServer


def register(server: "DiceServer") -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: "DiceServer", params: types.HoverParams) -> types.Hover | None:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        line, column = Positions(doc).server_position(params.position)
        lines = await hover_lines(ls, params.text_document.uri, line, column)
        if lines is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value="\n".join(lines)))
