"""On save: recompile at once, regenerate the regions whose intent changed
(dice.regenerateOnSave), never one the user edited by hand (a diagnostic says so instead), and,
so that the regenerated kernels reach the disk without a second save: before the save
(willSaveWaitUntil) the stale regions whose kernel is already known are written into the text
being saved; after it, once the regenerations it started have written their regions, the client
is asked to save again (`dice/saveDocument`, only while the user has not typed since). A
client about to quit asks `dice/awaitSave` and gets its answer once that is settled, so `:wq`
writes the regenerated kernels before the editor exits. Also,
when the user allows GPU runs (dice.gpu.enabled) and a GPU answers, check the file's generated
regions on it in the background (`dice_engine.api.verify_file`: verification, timing, sanitizer
and profiler) → their findings merged with the static ones, their figures for hover."""
from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any, Coroutine, TypeVar

from lsprotocol import types

from dice_engine.api import RegionCheck, verify_file
from dice_engine.intent import find_intents, region_edit
from dice_engine.intent_findings import edited_region_note

from ..convert import Positions
from ..current import current_sites, current_version, snapshot
from ..documents import Findings
from ..generation import Outcome, run
from ..gpu import gpu_runner
from ..server import DiceServer
from ..streams import GenerateRequest, Stream
from .diagnostics import publish, schedule

log = logging.getLogger(__name__)

REGENERATE_STALE_COMMAND = "dice.regenerateStale"
T = TypeVar("T")
SAVE_DOCUMENT = "dice/saveDocument"     # server -> client: {uri, version}: save it again
AWAIT_SAVE = "dice/awaitSave"           # client -> server: {uri} -> {save, version} once settled
GPU_CHECKS = ("sanitize", "profile")
GPU_TOOL_BUDGET_S = 120.0   # per sanitizer/profiler run on save: a slow kernel must not hold the GPU long
_background: set[asyncio.Task] = set()   # strong references to running regenerations


async def _regenerate(server: "DiceServer", request: GenerateRequest) -> Outcome:
    token = None
    if server.client_shows_progress:
        token = str(uuid.uuid4())
        await server.work_done_progress.create_async(token)
    outcome = await run(server, Stream(request), apply=server.client_applies_edits, progress=token)
    if outcome.error:
        log.warning("regeneration of %s failed: %s", request.uri, outcome.error)
    return outcome


def outside_regions(text: str) -> list[str]:
    """The lines of `text` that lie outside every generated region (markers included)."""
    lines = text.splitlines(keepends=True)
    inside = set()
    for site in find_intents(text):
        if site.region is not None:
            inside.update(range(site.region.begin_line, site.region.end_line + 1))
    return [line for number, line in enumerate(lines) if number not in inside]


async def _save_when_written(server: "DiceServer", uri: str, saved: str,
                             tasks: list[asyncio.Task]) -> int | None:
    """After the regenerations a save started: ask the client to save the document again when
    they wrote something and the text outside the regions is still the text that was saved
    (the user typed nothing since, so saving writes only DICE's kernels). Returns the version
    to save, or None when no second save is wanted."""
    outcomes = [o for o in await asyncio.gather(*tasks, return_exceptions=True) if isinstance(o, Outcome)]
    if (server.events.closed or not any(o.applied for o in outcomes)
            or server.workspace.text_documents.get(uri) is None):
        return None     # shutting down, nothing written, or the document closed
    doc = server.workspace.get_text_document(uri)
    version, now = doc.version, doc.source
    same = await server.workers.in_thread(lambda: outside_regions(saved) == outside_regions(now))
    if not (same and current_version(server, uri) == version):
        return None
    server.protocol.notify(SAVE_DOCUMENT, {"uri": uri, "version": version})
    return version


async def regenerate_stale(server: "DiceServer", uri: str, *, then_save: bool = False) -> int:
    """Start regenerating every stale region of `uri` that was not edited by hand; returns how
    many. `then_save`: ask the client to save once they are written (a save started them)."""
    tasks, source = await _start_stale(server, uri)
    if tasks and then_save:
        _in_background(_save_when_written(server, uri, source, tasks))
    return len(tasks)


async def regenerate_after_save(server: "DiceServer", uri: str, version: int | None,
                                earlier: "asyncio.Task[int | None] | None" = None) -> int | None:
    """What a save starts: the stale regions regenerated, then the second save asked for.
    Returns the version the client was asked to save, or None. A save that starts nothing
    while the previous save's work still runs (its regeneration of the same intent under way,
    or the text edited between) answers with that work's outcome, so a client quitting after
    both saves still waits for the kernel."""
    tasks, source = await _start_stale(server, uri, version)
    if tasks:
        return await _save_when_written(server, uri, source, tasks)
    if earlier is None or earlier.done():
        return None
    try:
        return await asyncio.shield(earlier)
    except asyncio.CancelledError:
        if not earlier.cancelled():
            raise          # this save's own work was cancelled (shutdown)
        return None
    except Exception:      # noqa: BLE001 — logged by the document events; nothing to save
        return None


async def _start_stale(server: "DiceServer", uri: str,
                       version: int | None = None) -> tuple[list[asyncio.Task[Outcome]], str]:
    """Start the regenerations of the stale, unedited regions of `uri` (the edited ones get a
    note instead); returns them and the text they started from. `version`: the one a save
    wrote; nothing starts once the text has moved past it (a later save decides)."""
    state = server.documents.get(uri)
    doc = server.workspace.get_text_document(uri)   # updated in place by later changes
    version = doc.version if version is None else version
    sites = await current_sites(server, uri)
    if version != current_version(server, uri):
        return [], doc.source      # edited meanwhile: the next save decides
    notes, tasks = [], []
    for site in sites:
        region = site.region
        if region is None or not region.stale or (uri, site.hash) in server.streams:
            continue
        if region.edited:
            notes.append(edited_region_note(state.path, site, doc.lines))
            continue
        tasks.append(_in_background(_regenerate(server, GenerateRequest(uri, site.hash))))
    state.notes = Findings(doc.version, notes)
    publish(server, uri)
    return tasks, doc.source


def _in_background(work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    task = asyncio.get_running_loop().create_task(work)
    _background.add(task)
    task.add_done_callback(_background.discard)
    return task


async def known_kernel_edits(server: "DiceServer", uri: str) -> list[types.TextEdit]:
    """Before a save: the edits writing each stale, unedited region whose kernel a finished
    generation already made for this intent, target and budget (none when the text moves on)."""
    doc = server.workspace.get_text_document(uri)
    version = doc.version
    sites = await current_sites(server, uri)
    if current_version(server, uri) != version:
        return []
    state, settings = server.documents.get(uri), server.settings
    positions = Positions(doc)
    edits = []
    for site in sites:
        region = site.region
        if (region is None or not region.stale or region.edited or state.unpaired(site)
                or (uri, site.hash) in server.streams):
            continue
        kernel = server.kernels.get((site.hash, settings.arch, settings.budget))
        if kernel is not None:
            edits.append(positions.text_edit(region_edit(doc.source, site, kernel.body, kernel.summary)))
    return edits


def gpu_pass(server: "DiceServer", text: str, path: str) -> list[RegionCheck] | None:
    """On a thread (the first call probes the GPU): the regions' checks, or None without a runner."""
    runner = gpu_runner(server)
    if runner is None:
        return None
    return verify_file(text, path, server.settings.arch, runner, checks=GPU_CHECKS,
                       timeout_s=GPU_TOOL_BUDGET_S)


async def run_gpu_checks(server: "DiceServer", uri: str) -> None:
    """Check the saved text on the GPU; results for a version the document has left are dropped."""
    snap = snapshot(server, uri)
    version = snap.version
    state = server.documents.get(uri)
    checks = await server.workers.in_background(gpu_pass, server, snap.text, state.path)
    if checks is None:
        log.info("GPU checks on save skipped for %s: no GPU runner", state.path)
        return
    if not snap.current() or server.documents.find(uri) is not state:
        return
    for check in checks:
        said = ([check.message] if check.status != "verified" else []) + check.notes
        for note in said:
            log.info("GPU check of the region below line %d: %s", check.line + 1, note)
    state.dynamic = Findings(version, [f for check in checks for f in check.findings])
    state.checked = {check.intent_hash: check.figures() for check in checks}
    publish(server, uri)


def check_on_save(server: "DiceServer", uri: str) -> bool:
    """Start the GPU check of `uri` in the background when the user allows GPU runs."""
    if not server.settings.gpu_enabled:     # trust: nothing runs unless the user allowed it
        return False
    server.debouncer.schedule(("gpu", uri), 0.0, lambda: run_gpu_checks(server, uri))
    return True


def register(server: "DiceServer") -> None:
    @server.feature(types.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL)
    async def will_save_wait_until(ls: "DiceServer",
                                   params: types.WillSaveTextDocumentParams) -> list[types.TextEdit]:
        if not ls.settings.regenerate_on_save:
            return []
        return await known_kernel_edits(ls, params.text_document.uri)

    after_save: dict[str, asyncio.Task[int | None]] = {}    # uri -> what its last save started

    def saved(uri: str) -> asyncio.Task[int | None] | None:
        schedule(server, uri, compile_now=True)
        check_on_save(server, uri)
        if not server.settings.regenerate_on_save:
            return None
        # Made here, while the notification is handled, so that a dice/awaitSave sent after
        # the save always finds it; returned so the document events own it (shutdown stops it).
        # The version is the one saved: the coroutine may first run after later changes.
        version = current_version(server, uri)
        task = asyncio.ensure_future(regenerate_after_save(server, uri, version, after_save.get(uri)))
        after_save[uri] = task
        task.add_done_callback(lambda done: after_save.pop(uri) if after_save.get(uri) is done else None)
        return task

    server.events.on("save", saved)

    @server.feature(AWAIT_SAVE)
    async def await_save(ls: "DiceServer", params: Any) -> dict[str, Any]:
        """Answers once the regenerations of the last save of `params.uri` have ended and the
        second save was asked for (or was not wanted): {"save": bool, "version": int | None}."""
        task = after_save.get(params.uri)
        version = None
        if task is not None:
            try:
                version = await asyncio.shield(task)    # a cancelled request leaves the work running
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise              # this request was cancelled, not the work (shutdown)
            except Exception:      # noqa: BLE001 — logged by the document events; nothing to save
                pass
        return {"save": version is not None, "version": version}

    @server.command(REGENERATE_STALE_COMMAND)
    async def regenerate_stale_command(ls: "DiceServer", raw: dict) -> dict:
        return {"started": await regenerate_stale(ls, raw["uri"])}
