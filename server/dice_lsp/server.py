"""The language server object: shared state (settings, documents, document events, background
workers, running generations, finished kernels). It knows no feature; app.py registers them."""
from __future__ import annotations

import asyncio
import logging
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Callable, Generator

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from dice_engine.compile.processes import stop_all

from .documents import Documents
from .events import DocumentEvents
from .jobs import Debouncer, Workers
from .kernel_cache import KernelCache
from .settings import Settings
from .streams import Stream
from .sync import synced
from .version import VERSION

if TYPE_CHECKING:
    from dice_engine.runner import GpuRunner

log = logging.getLogger(__name__)

# The workDoneToken of the executeCommand request being handled (pygls hands commands only
# their arguments); coroutines started for the command inherit it through their context.
command_work_done_token: ContextVar[types.ProgressToken | None] = ContextVar("command_work_done_token",
                                                                             default=None)

class DiceProtocol(LanguageServerProtocol):
    """pygls cancels a request's future on $/cancelRequest, but a running coroutine behind an
    executeCommand never sees that; this hook lets long work (streaming generation) stop."""

    _server: "DiceServer"

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        self._server.cancel_request(msg_id)
        super()._handle_cancel_notification(msg_id)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        result = yield from super().lsp_initialize(params)
        self._workspace = synced(self._workspace)   # line ends as the LSP counts them (sync.py)
        return result

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams) -> Generator[Any, Any, Any]:
        command_work_done_token.set(params.work_done_token)
        return (yield from super().lsp_workspace__execute_command(params))


class DiceServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("dice-lsp", VERSION, protocol_cls=DiceProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.settings = Settings()
        # Set once `initialized` has pulled the client's settings (features/settings.py): a
        # document opened before that publishes diagnostics and compiles only with them.
        self.settings_ready = asyncio.Event()
        self.documents = Documents(self.settings.arch)
        self.debouncer = Debouncer()
        self.workers = Workers()
        self._cancel_hooks: dict[Any, Callable[[], None]] = {}
        self.events = DocumentEvents()                      # features listen to open/change/save/close
        self.streams: dict[tuple[str, str], Stream] = {}    # (uri, intent hash) -> running generation
        self.kernels = KernelCache()                        # finished kernels, for willSaveWaitUntil
        self.gpu_probe: bool | None = None                  # see gpu.py
        self.gpu_runner: GpuRunner | None = None

    # --- $/cancelRequest -------------------------------------------------------------------
    def on_cancel_request(self, msg_id: Any, hook: Callable[[], None]) -> Callable[[], None]:
        """Call `hook` if the client cancels request `msg_id`; returns the un-registration."""
        self._cancel_hooks[msg_id] = hook

        def forget() -> None:
            if self._cancel_hooks.get(msg_id) is hook:
                del self._cancel_hooks[msg_id]
        return forget

    def cancel_request(self, msg_id: Any) -> None:
        hook = self._cancel_hooks.pop(msg_id, None)
        if hook is not None:
            hook()

    async def shutdown_work(self) -> None:
        """Stop streams and pending jobs and release the worker pools (before `exit`).

        Streams are awaited so that their commands answer before pygls cancels what is still
        pending (pygls mutates its request table while cancelling executeCommand futures)."""
        self.events.close()
        streams = list(self.streams.values())
        for stream in streams:
            stream.cancel.cancel("the server is shutting down")
        if streams:
            await asyncio.wait([asyncio.ensure_future(s.finished.wait()) for s in streams], timeout=10)
            await asyncio.sleep(0.05)    # let the commands' replies go out
        self.debouncer.cancel_all()
        await self.workers.shutdown()
        stop_all()     # nvcc of generation threads (the workers stop their own on terminate)

    # --- client capabilities -------------------------------------------------------------
    @property
    def client_applies_edits(self) -> bool:
        ws = self.client_capabilities.workspace
        return bool(ws and ws.apply_edit)

    @property
    def client_shows_progress(self) -> bool:
        window = self.client_capabilities.window
        return bool(window and window.work_done_progress)

    @property
    def client_pulls_configuration(self) -> bool:
        ws = self.client_capabilities.workspace
        return bool(ws and ws.configuration)

    def client_resolves(self, prop: str) -> bool:
        """Whether codeAction/resolve may fill in `prop` ("edit" or "command")."""
        td = self.client_capabilities.text_document
        ca = td.code_action if td else None
        support = ca.resolve_support if ca else None
        return bool(support and prop in support.properties)
