"""The server with every feature registered: document sync first (it feeds the document events
the others listen to), then settings, diagnostics, code actions, generation, hover, code lens
and save."""
from __future__ import annotations

import logging

from lsprotocol import types

from .features import (code_actions, code_lens, diagnostics, document_sync, generate, hover, on_save,
                       settings)
from .server import DiceServer

log = logging.getLogger(__name__)


def create_server() -> DiceServer:
    server = DiceServer()
    for feature in (document_sync, settings, diagnostics, code_actions, generate, hover, code_lens, on_save):
        feature.register(server)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: DiceServer, _params: None) -> None:
        log.info("shutting down: cancelling background work")
        await ls.shutdown_work()

    return server
