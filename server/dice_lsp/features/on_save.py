"""On save: recompile at once, and regenerate the regions whose intent changed
(dice.regenerateOnSave), never one the user edited by hand (a diagnostic says so instead)."""
from __future__ import annotations

import asyncio
import logging
import uuid

from lsprotocol import types

from ..documents import Findings
from ..server import DiceServer
from .diagnostics import current_sites, publish, schedule
from .generate import GenerateRequest, Stream, run
from .intents import edited_region_note

log = logging.getLogger(__name__)

REGENERATE_STALE_COMMAND = "dice.regenerateStale"
_background: set[asyncio.Task] = set()   # strong references to running regenerations


async def _regenerate(server: "DiceServer", request: GenerateRequest) -> None:
    token = None
    if server.client_shows_progress:
        token = str(uuid.uuid4())
        await server.work_done_progress.create_async(token)
    outcome = await run(server, Stream(request), apply=server.client_applies_edits, progress=token)
    if outcome.error:
        log.warning("regeneration of %s failed: %s", request.uri, outcome.error)


def regenerate_stale(server: "DiceServer", uri: str) -> int:
    """Start regenerating every stale region of `uri` that was not edited by hand; returns how many."""
    state = server.documents.get(uri)
    doc = server.workspace.get_text_document(uri)
    notes, started = [], 0
    for site in current_sites(server, uri):
        region = site.region
        if region is None or not region.stale or (uri, site.hash) in server.streams:
            continue
        if region.edited:
            notes.append(edited_region_note(state.path, site, doc.lines))
            continue
        task = asyncio.get_running_loop().create_task(_regenerate(server, GenerateRequest(uri, site.hash)))
        _background.add(task)
        task.add_done_callback(_background.discard)
        started += 1
    state.notes = Findings(doc.version, notes)
    publish(server, uri)
    return started


def register(server: "DiceServer") -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: "DiceServer", params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        schedule(ls, uri, compile_now=True)
        if ls.settings.regenerate_on_save:
            regenerate_stale(ls, uri)

    @server.command(REGENERATE_STALE_COMMAND)
    def regenerate_stale_command(ls: "DiceServer", raw: dict) -> dict:
        return {"started": regenerate_stale(ls, raw["uri"])}
