"""The document as it is now: its version, a snapshot of its text that knows whether it is
still current, its intents and its outline (found again on a thread when the static pass lags)."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass

from dice_engine.intent import IntentSite, find_intents

from .outline import Outline
from .server import DiceServer

_WAIT_FOR_PASS_STEPS = 50       # × 10 ms: how long a request waits for the static pass's intents


@dataclass(frozen=True)
class Snapshot:
    """One version of a document's text. Work computed from it is published (or answered)
    only while `current()` holds: a result for a version the document has left is dropped."""
    server: DiceServer
    uri: str
    version: int | None
    text: str

    def current(self) -> bool:
        return current_version(self.server, self.uri) == self.version


def snapshot(server: DiceServer, uri: str) -> Snapshot:
    doc = server.workspace.get_text_document(uri)
    return Snapshot(server, uri, doc.version, doc.source)


def current_version(server: DiceServer, uri: str) -> int | None:
    doc = server.workspace.text_documents.get(uri)
    return doc.version if doc is not None else None


async def current_sites(server: DiceServer, uri: str) -> list[IntentSite]:
    """The intents of the document as it is now (recomputed on a thread when the static pass
    lags: finding them parses the file)."""
    state = server.documents.get(uri)
    doc = server.workspace.get_text_document(uri)
    version = doc.version
    if state.sites_version == version:
        return state.sites
    # A static pass under way finds them first (tenths of a second on a big file): waiting for
    # it beats a second search competing with it for the GIL.
    for _ in range(_WAIT_FOR_PASS_STEPS):
        found_version, found = state.found_sites
        if found_version == version:   # found, not yet stored by the pass: store them for the callers
            state.sites, state.sites_version = found, version
            return found
        if state.static_task is None or state.static_task.done():
            break
        await asyncio.sleep(0.01)
    sites = await server.workers.in_thread(find_intents, doc.source)
    if current_version(server, uri) == version:
        state.sites, state.sites_version = sites, version
    return sites


async def current_outline(server: DiceServer, uri: str) -> Outline:
    """The kernels and launches of the document as it is now (a parse: on a thread)."""
    doc = server.workspace.get_text_document(uri)
    return await server.workers.in_thread(server.documents.get(uri).outline, doc.version, doc.source)
