"""Logging to the client (window/logMessage) and to a file; never to stdout, which carries the protocol."""
from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from .server import DiceServer

_LEVELS = {logging.ERROR: types.MessageType.Error, logging.WARNING: types.MessageType.Warning,
           logging.INFO: types.MessageType.Info, logging.DEBUG: types.MessageType.Log}
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def default_log_file() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "dice" / "dice-lsp.log"


class ClientLogHandler(logging.Handler):
    """Sends records to window/logMessage, from whichever thread logged them."""

    def __init__(self, server: "DiceServer", loop: asyncio.AbstractEventLoop, level: int = logging.INFO):
        super().__init__(level)
        self._server = server
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if self._loop.is_closed():
            return
        params = types.LogMessageParams(type=_LEVELS.get(record.levelno, types.MessageType.Log),
                                        message=self.format(record))
        if threading.get_ident() == self._loop_thread:
            self._server.window_log_message(params)
        else:
            self._loop.call_soon_threadsafe(self._server.window_log_message, params)


def setup_file_logging(path: Path | None, level: int = logging.INFO) -> Path | None:
    """Log `dice_lsp`, `dice_engine` and `pygls` records to `path`; returns the file used."""
    target = path or default_log_file()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(target, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.WARNING)
    for name in ("dice_lsp", "dice_engine"):
        logging.getLogger(name).setLevel(level)
    return target


def attach_client_handler(server: "DiceServer", loop: asyncio.AbstractEventLoop) -> None:
    handler = ClientLogHandler(server, loop)
    for name in ("dice_lsp", "dice_engine"):
        logging.getLogger(name).addHandler(handler)
