"""Document events that features listen to instead of importing each other: a document was
opened, changed (after the server's copy was updated), saved or closed. One LSP handler per
notification (features/document_sync.py) calls the listeners, in the order they registered,
while it handles the notification (so they see the documents in protocol order); a listener
that is a coroutine function runs on as a task."""
from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any, Awaitable, Callable, Literal

log = logging.getLogger(__name__)

Event = Literal["open", "change", "save", "close"]
Listener = Callable[[str], Awaitable[Any] | None]


class DocumentEvents:
    def __init__(self) -> None:
        self._listeners: dict[Event, list[Listener]] = {"open": [], "change": [], "save": [], "close": []}
        self._running: set[asyncio.Future[Any]] = set()     # strong references to listener tasks
        self._closed = False

    def on(self, event: Event, listener: Listener) -> None:
        """Call `listener(uri)` on each `event`."""
        self._listeners[event].append(listener)

    def emit(self, event: Event, uri: str) -> None:
        """Every listener runs; one failing is logged and never stops the others. Nothing runs
        once the server is shutting down."""
        if self._closed:
            return
        for listener in self._listeners[event]:
            try:
                result = listener(uri)
            except Exception:
                log.exception("a %s listener failed for %s", event, uri)
                continue
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._running.add(task)
                task.add_done_callback(self._ended)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """At shutdown: stop the listener tasks still running and start no more."""
        self._closed = True
        for task in list(self._running):
            task.cancel()

    def _ended(self, task: asyncio.Future[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a document listener failed", exc_info=task.exception())
