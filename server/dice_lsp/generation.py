"""The generation service: runs `CUDAGenerator.stream` on a worker thread for an intent and
reports each better kernel as a round of work-done progress. The region is written once, when
the search ends or the user accepts the best kernel so far (`dice.accept`), with
workspace/applyEdit as one versioned TextDocumentEdit of the region alone: one generation is
one undo step in the editor. With `dice.streamEdits` each better kernel is written as it is found.

Stops: $/cancelRequest or the progress token's cancel (nothing more is written), a newer
generate for the same intent, the user editing the region (or the intent) while it runs, or
the client refusing an edit."""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from lsprotocol import types

from dice_engine.api import CUDAGenerator, GenerationError, GenerationResult
from dice_engine.intent import IntentError, IntentSite, find_intents, region_edit
from dice_engine.llm import ConfigError

from . import status
from .convert import Positions
from .gpu import gpu_runner
from .jobs import CancelScope
from .server import DiceServer
from .settings import llm_config
from .streams import GenerateRequest, Stream

log = logging.getLogger(__name__)

ACCEPTED = "accepted"          # the cancel reason of a run the user accepted early
_WRITE_ATTEMPTS = 3            # a kernel refused for a stale version is computed again this often


@dataclass
class Outcome:
    """What a generation run produced: the best result's figures, edits applied, why it stopped."""
    figures: dict[str, Any] | None = None
    body: str | None = None
    summary: str = ""
    applied: int = 0
    version: int | None = None     # the document's version after the last kernel written
    stopped: str | None = None     # reason, when it did not run to the end
    accepted: bool = False         # the user took the best kernel before the search ended
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"applied": self.applied, "stopped": self.stopped, "accepted": self.accepted,
                "error": self.error, "result": self.figures}


def figures_of(result: GenerationResult) -> dict[str, Any]:
    """The plain figures of a GenerationResult that hover, code lens and progress show."""
    return {"name": result.name, "arch": result.arch, "gpu": result.gpu, "sketch": result.sketch,
            "tokens": dict(result.tokens), "resources": dict(result.resources), "verified": result.verified,
            "time_us": result.time_us, "reference_time_us": result.reference_time_us, "gbps": result.gbps,
            "tflops": result.tflops, "roofline_fraction": result.roofline_fraction,
            "cost_us": result.cost_us, "round": result.round, "rounds": result.rounds,
            "summary": result.summary}


def progress_line(fig: dict[str, Any]) -> str:
    tokens = ", ".join(f"{k}={v}" for k, v in list(fig["tokens"].items())[:4])
    if fig["time_us"] is not None:
        speed = f"{fig['time_us']:.1f} µs measured"
    elif fig["sketch"].startswith("model:"):
        speed = "written by a model, not verified (no GPU)"
    else:
        speed = f"~{fig['cost_us']:.1f} µs estimated"
    return f"round {fig['round']}/{fig['rounds']}: {fig['sketch']} ({tokens}) — {speed}"


# --- the engine, on a worker thread ------------------------------------------------------------

def _results(server: "DiceServer", intent: str, arch: str | None, cancel: CancelScope,
             on_progress: Callable[[str], None] | None = None
             ) -> Iterator[tuple[GenerationResult, dict[str, Any]]]:
    settings = server.settings
    try:
        llm = llm_config(settings)
    except ConfigError as exc:
        raise GenerationError(f"dice.llm settings: {exc}") from None
    # default_shape=None: the editor never assumes a size the intent does not give.
    generator = CUDAGenerator(arch=settings.arch, budget=settings.budget, runner=gpu_runner(server),
                              default_shape=None, llm=llm, on_progress=on_progress)
    overrides = {"arch": arch} if arch else {}
    for result in generator.stream(intent, cancel=cancel.event, **overrides):
        yield result, figures_of(result)


# --- edits ------------------------------------------------------------------------------------

def find_site(server: "DiceServer", uri: str, intent_hash: str) -> IntentSite | None:
    doc = server.workspace.get_text_document(uri)
    return next((s for s in find_intents(doc.source) if s.hash == intent_hash), None)


def region_text_edit(server: "DiceServer", uri: str, site: IntentSite, body: str,
                     summary: str) -> types.TextDocumentEdit:
    doc = server.workspace.get_text_document(uri)
    edit = Positions(doc).text_edit(region_edit(doc.source, site, body, summary))
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version),
        edits=[edit])


async def _apply(server: "DiceServer", stream: Stream, body: str, summary: str) -> str | None:
    """Apply one kernel; returns why writing must stop, or None. An edit the client refuses
    because the user typed just before it arrived is computed again for the new text (a few
    times), unless that typing touched the region or the intent."""
    uri, intent_hash = stream.request.uri, stream.request.hash
    for attempt in range(_WRITE_ATTEMPTS):
        site = find_site(server, uri, intent_hash)
        if site is None:
            return "the intent changed while generating"
        if server.documents.get(uri).unpaired(site):
            return "the region's // @dice-end line went missing while generating; kept your text"
        before = server.workspace.get_text_document(uri).version
        change = region_text_edit(server, uri, site, body, summary)
        result = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
            edit=types.WorkspaceEdit(document_changes=[change]), label="DICE: generate kernel"))
        # The client's didChange for this edit (or for the user's typing that made it refuse
        # the edit) may trail its reply; the next step needs that text.
        await _version_after(server, uri, before)
        if result.applied:
            return None
        if stream.cancel.reason not in (None, ACCEPTED) or attempt + 1 == _WRITE_ATTEMPTS:
            return f"the editor did not apply the kernel ({result.failure_reason or 'document changed'})"
    return None


async def _version_after(server: "DiceServer", uri: str, before: int | None, timeout_s: float = 1.0) -> None:
    for _ in range(int(timeout_s / 0.005)):
        if server.workspace.get_text_document(uri).version != before:
            return
        await asyncio.sleep(0.005)


# --- running ----------------------------------------------------------------------------------

async def run(server: "DiceServer", stream: Stream, *, apply: bool,
              progress: types.ProgressToken | None = None) -> Outcome:
    """Generate for the intent of `stream.request`; with `apply`, stream each better kernel into
    the document. One stream per intent: a newer run supersedes an older one."""
    request = stream.request
    key = (request.uri, request.hash)
    previous = server.streams.get(key)
    server.streams[key] = stream
    if previous is not None:
        previous.cancel.cancel("superseded by a newer generate")
        await previous.finished.wait()
    outcome = Outcome()
    began = False
    started = time.monotonic()
    try:
        site = find_site(server, request.uri, request.hash)
        if site is None:
            outcome.error = "the intent is no longer in the document"
            return outcome
        if server.documents.get(request.uri).unpaired(site):
            outcome.error = ("the region's own // @dice-end line is missing, so its markers no longer "
                             "pair up; DICE will not write over the code below the kernel: restore "
                             "the marker first (see the diagnostic on the @dice-begin line)")
            return outcome
        if site.region is not None and site.region.edited and not request.force:
            outcome.error = ("the region was edited by hand; use “DICE: Regenerate kernel (replace your "
                             "edits in the region)” to overwrite it")
            return outcome
        if site.region is not None and request.force:
            lines = server.workspace.get_text_document(request.uri).lines
            stream.replaces = list(lines[site.region.begin_line:site.region.end_line + 1])
        log.info("generation started in %s (arch %s): %s", request.uri, request.arch or server.settings.arch,
                 " ".join(site.text.split())[:120])
        if progress is not None:
            server.work_done_progress.begin(progress, types.WorkDoneProgressBegin(
                title="DICE: generating kernel", cancellable=True, message=site.text[:80]))
            began = True
            cancelled = server.work_done_progress.tokens.get(progress)
            if cancelled is not None:
                cancelled.add_done_callback(lambda _f: stream.cancel.cancel("cancelled"))
        await _consume(server, stream, site.text, outcome, apply=apply, progress=progress)
    except IntentError as exc:
        outcome.error = exc.message
    except (GenerationError, KeyError) as exc:
        outcome.error = str(exc.args[0]) if exc.args else type(exc).__name__
    except Exception as exc:
        log.exception("generation failed")
        outcome.error = f"generation failed: {exc}"
    finally:
        if stream.cancel.reason == ACCEPTED:
            outcome.accepted = True
        else:
            outcome.stopped = outcome.stopped or stream.cancel.reason
        log.info("generation ended in %s after %.1f s: %s", request.uri, time.monotonic() - started,
                 _end_message(outcome))
        if began:
            server.work_done_progress.end(progress, types.WorkDoneProgressEnd(message=_end_message(outcome)))
        stream.finished.set()
        if server.streams.get(key) is stream:
            del server.streams[key]
        status.send(server, None)
    return outcome


async def _consume(server: "DiceServer", stream: Stream, intent: str, outcome: Outcome, *,
                   apply: bool, progress: types.ProgressToken | None) -> None:
    state = server.documents.get(stream.request.uri)
    loop = asyncio.get_running_loop()

    def report(line: str) -> None:       # on the loop: a model round's line
        if stream.cancel.cancelled:
            return
        if progress is not None:
            server.work_done_progress.report(progress, types.WorkDoneProgressReport(message=line,
                                                                                    cancellable=True))
        status.send(server, line)

    def tell(line: str) -> None:         # on the generating thread
        loop.call_soon_threadsafe(report, line)

    async def write(body: str, summary: str) -> bool:
        stop = await _apply(server, stream, body, summary)
        if stop is not None:
            outcome.stopped = stop
            stream.cancel.cancel(stop)
            return False
        stream.written = True
        outcome.applied += 1
        outcome.version = server.workspace.get_text_document(stream.request.uri).version
        return True

    each_round = server.settings.stream_edits
    results = server.workers.stream(
        lambda: _results(server, intent, stream.request.arch, stream.cancel, tell), stream.cancel.stopped)
    async for result, fig in results:
        if stream.cancel.cancelled:
            break
        outcome.figures, outcome.body, outcome.summary = fig, result.source, result.summary
        state.generated[stream.request.hash] = fig
        if progress is not None:
            server.work_done_progress.report(progress, types.WorkDoneProgressReport(
                message=progress_line(fig), cancellable=True))
        status.send(server, progress_line(fig))
        if apply and each_round and not await write(result.source, result.summary):
            break
    finished = not stream.cancel.cancelled
    if finished and outcome.body is not None:
        key = (stream.request.hash, stream.request.arch or server.settings.arch, server.settings.budget)
        server.kernels.put(key, outcome.body, outcome.summary)
    # Written once: when the search ran to its end or the user accepted the best so far.
    accepted = stream.cancel.reason == ACCEPTED
    if apply and not each_round and outcome.body is not None and (finished or accepted):
        await write(outcome.body, outcome.summary)


def _end_message(outcome: Outcome) -> str:
    if outcome.error:
        return f"failed: {outcome.error}"
    if outcome.stopped:
        return f"stopped: {outcome.stopped}"
    if outcome.figures:
        return f"done{' (accepted)' if outcome.accepted else ''}: {progress_line(outcome.figures)}"
    return "done: no kernel"


def accept(server: "DiceServer", uri: str, intent_hash: str | None = None) -> int:
    """Stop the running generations of `uri` (or of one intent) and have each write the best
    kernel found so far; returns how many were running."""
    running = [s for (u, h), s in server.streams.items()
               if u == uri and (intent_hash is None or h == intent_hash) and not s.cancel.cancelled]
    for stream in running:
        stream.cancel.cancel(ACCEPTED)
    return len(running)


def stop_streams_edited_by_user(server: "DiceServer", uri: str) -> None:
    """After a change: stop any stream whose region (or intent) the user has just edited."""
    active = [s for (u, _h), s in server.streams.items() if u == uri and not s.cancel.cancelled]
    if not active:
        return
    doc = server.workspace.get_text_document(uri)
    sites = {s.hash: s for s in find_intents(doc.source)}
    for stream in active:
        site = sites.get(stream.request.hash)
        if site is None:
            stream.cancel.cancel("the intent was edited while generating")
        elif stream.region_is_users(site, doc.lines):
            stream.cancel.cancel("you edited the region while it was generating; kept your text")


async def final_edit(server: "DiceServer", request: GenerateRequest) -> types.WorkspaceEdit | None:
    """For clients that cannot take streamed edits: generate to the end, return one edit."""
    outcome = await run(server, Stream(request), apply=False)
    if outcome.body is None:
        if outcome.error:
            server.window_show_message(types.ShowMessageParams(types.MessageType.Error,
                                                               f"DICE: {outcome.error}"))
        return None
    site = find_site(server, request.uri, request.hash)
    if site is None:
        return None
    return types.WorkspaceEdit(document_changes=[
        region_text_edit(server, request.uri, site, outcome.body, outcome.summary)])


