"""The diagnostics loop. Every change starts (or re-arms) the static pass — incremental
analyzer + intents, on a thread, tens of ms — and schedules, debounced, the compile pass (nvcc
in a worker process). Results computed for a version the document has since left are dropped;
everything is published with the version it describes."""
from __future__ import annotations

import asyncio
import functools
import logging
import os
from typing import TYPE_CHECKING, Any, Sequence

from lsprotocol import types

from dice_engine.analysis import compiler_findings
from dice_engine.analysis.compiler import findings_from_result
from dice_engine.analysis.budget import OverBudget, over_budget
from dice_engine.analysis.codes import CODES
from dice_engine.analysis.findings import Finding
from dice_engine.compile import NvccNotFound, compile_cuda
from dice_engine.intent import Intents, find_intents
from dice_engine.intent.regions import LINE_BREAK, dominant_newline, split_lines
from dice_engine.intent_findings import intent_findings, pairing_findings, still_true

from ..convert import Positions
from ..current import snapshot
from ..documents import DocumentState, Findings
from ..jobs import CancelFlag
from ..settings import model_active

if TYPE_CHECKING:
    from ..server import DiceServer

log = logging.getLogger(__name__)
SKIPPED = "DICE-A001"     # the input is over the analysis budget
FAILED = "DICE-A002"      # one part of the analysis failed


# --- work done off the event loop -------------------------------------------------------------

def static_pass(state: DocumentState, text: str, version: int | None, arch: str,
                model: bool = False) -> tuple[Intents, list[Finding]]:
    """Runs on a thread: the analyzer's incremental update, and the intents of `text` with
    their own findings. The intents reuse the analyzer's tree, under the lock: the next update
    edits that tree. A text over the analysis budget skips the analyses with one finding saying
    so; one part failing (a bug, an input nobody foresaw) never silences the others."""
    findings: list[Finding] = []
    lines = LINE_BREAK.split(text)     # split_lines(text)[0] in one C call (~1 ms less a keystroke)
    with state.analyzer_lock:
        skipped = over_budget(text)
        if skipped is not None:
            findings.append(analysis_skipped(state.path, lines, skipped))
            tree = None
        else:
            findings += state.analyzer.update(text)
            tree = state.analyzer.tree
            if tree is not None:    # for hover and code lens, from the tree already parsed
                state.keep_tree(version, tree)
        try:
            sites = find_intents(text, tree)
        except Exception as exc:      # noqa: BLE001 — reported, the analyses' findings stay
            log.exception("finding the intents of %s failed", state.path)
            findings.append(analysis_failed(state.path, "finding the intents", exc))
            sites = Intents([], [])
    state.found_sites = (version, sites)
    findings += intent_findings(sites, state.path, lines, arch, model, newline=dominant_newline(text),
                                lost_ends_by_caller=True)
    return sites, findings


def analysis_skipped(path: str, lines: Sequence[str], why: OverBudget) -> Finding:
    return Finding(file=path, line=why.line, column=0, end_line=why.line,
                   end_column=min(len(lines[why.line]), 200), category=CODES[SKIPPED].category,
                   code=SKIPPED, severity=CODES[SKIPPED].severity,
                   message=f"DICE skipped the static analysis of this file: {why.reason} "
                           "(intents, region markers and the nvcc compile still run)")


def analysis_failed(path: str, what: str, exc: BaseException) -> Finding:
    return Finding(file=path, line=0, column=0, end_line=0, end_column=0,
                   category=CODES[FAILED].category, code=FAILED, severity=CODES[FAILED].severity,
                   message=f"DICE: {what} failed ({type(exc).__name__}: {exc}); the other findings "
                           "are still shown")


def compile_pass(text: str, path: str, arch: str, nvcc: str | None, flags: Sequence[str],
                 include_paths: Sequence[str], cancel_path: str) -> tuple[list[Finding], dict[str, Any]]:
    """Runs in a worker process: compiler and resource findings, and per-kernel resources
    (ptxas figures, for hover). nvcc runs as an argument list, never through a shell, and is
    stopped as soon as the file at `cancel_path` exists (a newer version superseded this one)."""
    includes = (*include_paths, os.path.dirname(path) or ".")
    cancelled = functools.partial(CancelFlag.is_set, cancel_path)
    try:
        if cancelled():            # superseded while it waited for a worker
            return [], {}
        result = compile_cuda(text, arch, output="cubin", flags=tuple(flags), include_paths=includes,
                              nvcc=nvcc, filename=path, cancel=cancelled)
    except NvccNotFound:   # the analysis turns this into its one clear finding
        return compiler_findings(text, path, arch, nvcc=nvcc), {}
    finally:
        if os.path.exists(cancel_path):
            os.unlink(cancel_path)
    return findings_from_result(text, path, arch, result), dict(result.resources)


def warm_up_worker() -> None:
    """Submitted once at start so the first compile does not pay for spawning and imports."""


# --- scheduling -------------------------------------------------------------------------------

def schedule(server: "DiceServer", uri: str, *, compile_now: bool = False) -> None:
    settings = server.settings
    request_static(server, uri)
    if settings.compile_on_change or compile_now:
        delay = 0.0 if compile_now else settings.compile_debounce_ms / 1000
        server.debouncer.schedule(("compile", uri), delay, lambda: run_compile(server, uri))


def refresh_all(server: "DiceServer") -> None:
    for uri in server.documents.uris():
        if uri in server.workspace.text_documents:
            schedule(server, uri, compile_now=True)


def request_static(server: "DiceServer", uri: str) -> None:
    """Start the static pass now if none is running for `uri`; else have the running one go
    again when it ends. No fixed debounce delay: a keystroke's findings wait only for the pass
    already under way, and at most one more pass is ever queued."""
    state = server.documents.get(uri)
    state.static_dirty = True
    if state.static_task is None or state.static_task.done():
        state.static_task = asyncio.get_running_loop().create_task(_static_passes(server, uri, state))


async def _static_passes(server: "DiceServer", uri: str, state: DocumentState) -> None:
    while state.static_dirty and server.documents.find(uri) is state:
        state.static_dirty = False
        try:
            await run_static(server, uri)
        except Exception:
            log.exception("static analysis of %s failed", uri)


async def run_static(server: "DiceServer", uri: str) -> None:
    snap = snapshot(server, uri)
    version, text = snap.version, snap.text
    state = server.documents.get(uri)
    with_settings = server.settings_ready.is_set()
    used = (server.settings.arch, model_active(server.settings))
    sites, findings = await server.workers.in_thread(static_pass, state, text, version, *used)
    if not snap.current():
        return
    state.sites, state.sites_version = sites, version
    if state.edits is not None:
        state.pairs.update(version, sites, state.edits)
    if not with_settings:
        # Analysed with the defaults (hover and the commands already read the sites stored
        # above); what is published comes from the client's settings: go again if they differ
        # in what the pass reads (on a big file a second pass costs the first hover its time).
        await server.settings_ready.wait()
        if used != (server.settings.arch, model_active(server.settings)) or not snap.current():
            state.static_dirty = True
            return
    findings = findings + pairing_findings(sites, state.path, text, state.unpaired)
    state.static = Findings(version, findings)
    if state.notes.items:
        lines = split_lines(text)[0]
        state.notes = Findings(version, still_true(state.notes.items, sites, lines, state.path))
    publish(server, uri)


async def run_compile(server: "DiceServer", uri: str) -> None:
    await server.settings_ready.wait()
    snap = snapshot(server, uri)
    version, text = snap.version, snap.text
    state = server.documents.get(uri)
    s = server.settings
    flag = CancelFlag()
    try:
        findings, resources = await server.workers.in_process(
            compile_pass, text, state.path, s.arch, s.nvcc_path, s.nvcc_flags, s.include_paths, flag.path)
    except asyncio.CancelledError:   # superseded (the debouncer cancels on every change): stop nvcc
        flag.set()
        log.info("compile of %s version %s stopped: a newer version superseded it", state.path, version)
        raise
    if not snap.current() or server.documents.find(uri) is not state:
        return
    state.compiler = Findings(version, findings)
    state.resources, state.resources_arch = resources, s.arch
    publish(server, uri)


def publish(server: "DiceServer", uri: str) -> None:
    doc = server.workspace.text_documents.get(uri)
    state = server.documents.find(uri)
    if doc is None or state is None:
        return
    positions = Positions(doc)
    diagnostics = [positions.diagnostic(f) for f in state.published(doc.version) if f.file == state.path]
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=doc.version))


# --- wiring -----------------------------------------------------------------------------------

def register(server: "DiceServer") -> None:
    def opened(uri: str) -> None:
        schedule(server, uri, compile_now=True)

    def closed(uri: str) -> None:
        server.debouncer.cancel_matching(lambda key: isinstance(key, tuple) and key[-1] == uri)
        state = server.documents.find(uri)
        if state is not None and state.static_task is not None:
            state.static_task.cancel()
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    server.events.on("open", opened)
    server.events.on("change", lambda uri: schedule(server, uri))
    server.events.on("close", closed)
