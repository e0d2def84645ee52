"""The one handler of each document notification: keeps the per-document edit log that moves
older findings, then tells the features (`server.events`: diagnostics, generation, save).
Closing forgets the document's state after every close listener ran."""
from __future__ import annotations

from lsprotocol import types

from ..server import DiceServer
from ..shift import EditLog


def register(server: DiceServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DiceServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.documents.get(uri).edits = EditLog(params.text_document.version,
                                             len(ls.workspace.get_text_document(uri).lines))
        ls.events.emit("open", uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DiceServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        state = ls.documents.get(uri)
        if state.edits is not None:
            state.edits.record(params.text_document.version, list(params.content_changes),
                               len(ls.workspace.get_text_document(uri).lines))
        ls.events.emit("change", uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: DiceServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.events.emit("save", params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DiceServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.events.emit("close", uri)
        ls.documents.close(uri)
