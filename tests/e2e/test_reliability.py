"""Issue 19's faults, each replayed against the real `dice-lsp` process: the server's copy of a
document with form feeds / U+2028 / U+0085, a region whose @dice-end was deleted, findings of
an older version, deeply nested intents, hostile inputs, and nvcc outliving the server."""
from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from dice_engine.intent import find_intents

from .editor import Editor, needs_nvcc, start, stop
from .hostile import HOSTILE

MARKER = "DICE-I003"
UNSERVABLE = "DICE-I001"
SKIPPED = "DICE-A001"
NVCC_ERROR = "DICE-E001"
DOUBLE_LITERAL = "DICE-P001"


def codes_at(diagnostics: list[types.Diagnostic]) -> set[tuple[str, int]]:
    return {(str(d.code), d.range.start.line) for d in diagnostics}


def generate(uri: str, intent_hash: str, *, force: bool = False) -> types.Command:
    return types.Command(title="generate", command="dice.generate",
                         arguments=[{"uri": uri, "hash": intent_hash, "force": force}])


def end_line_after(text: str, begin: int) -> int:
    lines = text.split("\n")
    return next(i for i in range(begin + 1, len(lines)) if lines[i].startswith("// @dice-end"))


# --- 1. line ends as the LSP counts them ------------------------------------------------------

@needs_nvcc
@pytest.mark.parametrize("char", ["\f", "\u2028", "\x85"], ids=["form-feed", "U+2028", "U+0085"])
async def test_generation_after_a_form_feed_line_stays_in_its_region(session, char):
    tail = "int user_b = 2;\nint user_c = 3;\n"
    head = f"// page one{char}\nint user_a = 1;\n// @dice: y = relu(x); x: f32[4096]\n"
    editor = await session(settings={"budget": 6})
    uri = editor.open("pages.cu", head + tail)
    (site,) = find_intents(head + tail)
    first = await editor.execute(generate(uri, site.hash))
    forced = await editor.execute(generate(uri, site.hash, force=True))
    assert first["applied"] >= 1 and forced["error"] is None, (first, forced)
    text = editor.text(uri)
    assert text.count("// @dice-begin") == 1 and text.count("// @dice-end") == 1
    (site,) = find_intents(text)
    lines = text.splitlines(keepends=True)   # str.splitlines: the form feed splits here too
    assert text.startswith(head) and text.endswith("// @dice-end\n" + tail)
    assert site.region is not None and not site.region.edited
    assert lines[-3:] == ["// @dice-end\n", "int user_b = 2;\n", "int user_c = 3;\n"]


async def test_edits_below_a_form_feed_line_land_where_the_editor_made_them(session):
    text = "// page one\f and U+2028 \u2028 here\nint a = 1;\n\n// @dice: y = frobnicate(x); x: f32[16]\n"
    editor = await session(settings={"compileOnChange": False})
    uri = editor.open("pages.cu", text)
    assert (UNSERVABLE, 3) in codes_at(await editor.diagnostics(uri, version=1, where=lambda d: d))
    editor.type(uri, 2, 0, 2, 0, "int b = 2;\nint c = 3;\n")
    assert editor.text(uri).split("\n")[5].startswith("// @dice: y = frobnicate")
    diagnostics = await editor.diagnostics(uri, version=2, where=lambda d: d)
    assert (UNSERVABLE, 5) in codes_at(diagnostics)
    assert "**DICE intent**" in (await editor.hover(uri, 5, 5) or "")


# --- 2. a region whose @dice-end was deleted is never written over ----------------------------

async def _generated_then_end_deleted(session, *, edit_body: bool) -> tuple[Editor, str, str]:
    original = "// @dice: y = relu(x); x: f32[4096]\nint user_code = 1;\n// @dice-end\n"
    editor = await session()
    uri = editor.open("lost_end.cu", original)
    (site,) = find_intents(original)
    assert (await editor.execute(generate(uri, site.hash)))["applied"] >= 1
    text = editor.text(uri)
    begin = next(i for i, line in enumerate(text.split("\n")) if line.startswith("// @dice-begin"))
    await editor.diagnostics(uri, where=lambda d: MARKER in {str(x.code) for x in d})   # the orphan end
    if edit_body:   # the user types in the kernel first: its body no longer hashes as generated
        editor.type(uri, begin + 1, 0, begin + 1, 0, "// tuned by hand\n")
        await editor.diagnostics(uri)
    end = end_line_after(editor.text(uri), begin)
    editor.type(uri, end, 0, end + 1, 0, "")
    return editor, uri, site.hash


@needs_nvcc
@pytest.mark.parametrize("edit_body", [False, True], ids=["body-intact", "body-edited"])
async def test_forced_regenerate_never_deletes_code_below_a_lost_end_marker(session, edit_body):
    editor, uri, intent_hash = await _generated_then_end_deleted(session, edit_body=edit_body)
    before = editor.text(uri)
    (site,) = find_intents(before)
    assert site.region is not None and "int user_code = 1;" in before.split("\n")[site.region.begin_line:
                                                                                 site.region.end_line]
    marker = (MARKER, site.region.begin_line)
    diagnostics = await editor.diagnostics(uri, where=lambda d: marker in codes_at(d))
    warning = next(d for d in diagnostics if (str(d.code), d.range.start.line) == marker)
    assert "@dice-end" in warning.message and "DICE will not regenerate it" in warning.message
    titles = [a.title for a in await editor.code_actions(uri, site.line)]
    assert not [t for t in titles if "Regenerate" in t or "Tune" in t], titles
    outcome = await editor.execute(generate(uri, intent_hash, force=True))
    assert outcome["applied"] == 0 and "@dice-end" in outcome["error"]
    assert editor.text(uri) == before and "int user_code = 1;" in before


@needs_nvcc
async def test_the_quick_fix_restores_the_lost_end_marker(session):
    editor, uri, intent_hash = await _generated_then_end_deleted(session, edit_body=False)
    (site,) = find_intents(editor.text(uri))
    await editor.diagnostics(uri, where=lambda d: (MARKER, site.region.begin_line) in codes_at(d))
    fixes = await editor.code_actions(uri, site.region.begin_line, only_kind=types.CodeActionKind.QuickFix)
    fix = next(a for a in fixes if "Restore" in a.title)
    await editor.on_apply_edit(types.ApplyWorkspaceEditParams(edit=fix.edit))
    (site,) = find_intents(editor.text(uri))
    assert site.region is not None and not site.region.edited and site.region.missing_end is None
    lines = editor.text(uri).split("\n")
    assert lines[site.region.end_line + 1] == "int user_code = 1;"
    outcome = await editor.execute(generate(uri, intent_hash))
    assert outcome["error"] is None and "int user_code = 1;" in editor.text(uri)


# --- 3. findings of an older version are moved to where their text is now ---------------------

@needs_nvcc
async def test_compiler_findings_move_with_lines_inserted_above(session):
    text = "#include <cuda_runtime.h>\nint fine = 1;\nint broken = no_such_name;\n"
    editor = await session(settings={"compileDebounceMs": 60_000})    # no compile after open
    uri = editor.open("moved.cu", text)
    await editor.diagnostics(uri, version=1, where=lambda d: (NVCC_ERROR, 2) in codes_at(d))
    editor.type(uri, 0, 0, 0, 0, "// one\n// two\n// three\n")
    await editor.diagnostics(uri, version=2, where=lambda d: (NVCC_ERROR, 5) in codes_at(d))
    await asyncio.sleep(0.5)
    for version, diagnostics in editor.published[uri]:
        lines = {line for code, line in codes_at(diagnostics) if code == NVCC_ERROR}
        assert lines <= ({2} if version == 1 else {5}), (version, lines)
    editor.type(uri, 5, 0, 5, 3, "long")        # the erroring line itself: withheld until recompiled
    diagnostics = await editor.diagnostics(uri, version=3)
    assert NVCC_ERROR not in {str(d.code) for d in diagnostics}


async def test_save_right_after_a_change_never_publishes_old_lines(session):
    text = ("__global__ void scale(float* x, int n) {\n    int i = threadIdx.x;\n"
            "    if (i < n) x[i] = x[i] * 0.5;\n}\n")
    editor = await session(settings={"compileOnChange": False, "regenerateOnSave": True})
    uri = editor.open("saved.cu", text)
    await editor.diagnostics(uri, version=1, where=lambda d: DOUBLE_LITERAL in {str(x.code) for x in d})
    for _ in range(12):
        editor.type(uri, 0, 0, 0, 0, "// a line above\n")
        editor.save(uri)
    await editor.diagnostics(uri, version=13, where=lambda d: DOUBLE_LITERAL in {str(x.code) for x in d})
    await asyncio.sleep(0.5)
    for version, diagnostics in editor.published[uri]:
        lines = {line for code, line in codes_at(diagnostics) if code == DOUBLE_LITERAL}
        assert lines <= {2 + version - 1}, (version, lines)


# --- 4. a deeply nested intent is one clear diagnostic, the rest of the file still analysed ------

async def test_deeply_nested_intent_is_a_diagnostic_and_the_rest_still_works(session):
    nested = "// @dice: y = " + "(" * 100 + "x" + ")" * 100 + "; x: f32[4096]"
    text = (f"{nested}\n\n// @dice: y = frobnicate(x); x: f32[16]\n\n"
            "__global__ void scale(float* x) { x[threadIdx.x] = x[threadIdx.x] * 0.5; }\n")
    editor = await session(settings={"compileOnChange": False})
    uri = editor.open("nested.cu", text)
    diagnostics = await editor.diagnostics(uri, version=1, where=lambda d: d)
    found = codes_at(diagnostics)
    assert {(UNSERVABLE, 0), (UNSERVABLE, 2), (DOUBLE_LITERAL, 4)} <= found, found
    message = next(d.message for d in diagnostics if (str(d.code), d.range.start.line) == (UNSERVABLE, 0))
    assert "nests" in message and "recursion" not in message
    assert "cannot be served" in (await editor.hover(uri, 0, 3) or "")
    (site, _other) = find_intents(text)
    outcome = await editor.execute(generate(uri, site.hash))
    assert "nests" in outcome["error"] and "recursion" not in outcome["error"]


# --- 5. hostile inputs: hover within 1 s, the event loop answering within 100 ms ----------------

async def cancel_round_trip(editor: Editor, uri: str) -> float:
    """Seconds from a hover request and its $/cancelRequest to the server's answer."""
    msg_id = str(uuid.uuid4())
    started = time.perf_counter()
    future = editor.client.protocol.send_request(
        types.TEXT_DOCUMENT_HOVER, types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 0)),
        msg_id=msg_id)
    editor.cancel_request(msg_id)
    try:
        await asyncio.wait_for(asyncio.wrap_future(future), 30)
    except JsonRpcRequestCancelled:
        pass
    return time.perf_counter() - started


async def timed_hover(editor: Editor, uri: str, line: int, character: int) -> float:
    started = time.perf_counter()
    await editor.hover(uri, line, character)
    return time.perf_counter() - started


@pytest.mark.parametrize("name", list(HOSTILE))
async def test_hostile_input_keeps_the_server_answering(session, name):
    """Requests right after the open and after a keystroke, while the server works on the text.
    The issue's bounds: hover within 1 s, a cancelled request answered within 100 ms (taken
    as the median; on this shared two-core machine one sample in twenty can wait on the
    scheduler, so single samples are held to 1 s, far from the minutes this once took)."""
    text = HOSTILE[name]()
    editor = await session()
    uri = editor.open("hostile.cu", text)
    round_trips = [await cancel_round_trip(editor, uri) for _ in range(10)]
    hovers = [await timed_hover(editor, uri, 1, 6)]
    diagnostics = await editor.diagnostics(uri, version=1, timeout=120)
    editor.type(uri, 0, 0, 0, 0, "// typed\n")
    round_trips += [await cancel_round_trip(editor, uri) for _ in range(10)]
    hovers.append(await timed_hover(editor, uri, 2, 6))
    await editor.diagnostics(uri, version=2, timeout=120)
    median = sorted(round_trips)[len(round_trips) // 2]
    print(f"{name}: hover max {max(hovers) * 1000:.0f} ms, cancel round trip median "
          f"{median * 1000:.0f} ms, max {max(round_trips) * 1000:.0f} ms")
    assert max(hovers) <= 1.0, hovers
    assert median <= 0.1 and max(round_trips) <= 1.0, round_trips
    if name != "10k intents":      # every other one is over the analysis budget
        assert SKIPPED in {str(d.code) for d in diagnostics}
    assert editor.client._server.returncode is None


# --- 6. nothing of ours outlives the server ---------------------------------------------------

def _processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, process group, command name) of every process."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(entry.name)] = (int(fields[1]), int(fields[2]), name)
    return out


def _descendants(root: int) -> dict[int, tuple[int, int, str]]:
    table = _processes()
    found, frontier = {}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, info in table.items():
            if info[0] == parent and pid not in found:
                found[pid] = info
                frontier.append(pid)
    return found


def slow_source(kernels: int = 2500) -> str:
    return "\n".join(f"__global__ void k{i}(float* x) {{ float a = x[threadIdx.x]; "
                     f"for (int t = 0; t < 64; t++) a = a * 1.0001f + {i}.0f; x[threadIdx.x] = a; }}"
                     for i in range(kernels))


async def _compiling_server(tmp_path: Path, monkeypatch) -> tuple[Editor, int, Path]:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    editor = await start(tmp_path, settings={"compileDebounceMs": 0})
    editor.open("slow.cu", slow_source())
    pid = editor.client._server.pid
    deadline = time.monotonic() + 60
    while not any(name in ("nvcc", "cicc") for _p, _g, name in _descendants(pid).values()):
        assert time.monotonic() < deadline, "nvcc never started"
        await asyncio.sleep(0.1)
    return editor, pid, temp


def _left_over(seen: dict[int, tuple[int, int, str]]) -> list[str]:
    groups = {group for _parent, group, _name in seen.values()}
    now = _processes()
    return [f"{pid} {info[2]}" for pid, info in now.items()
            if (pid in seen and now[pid][2] == seen[pid][2]) or info[1] in groups - {os.getpgid(0)}]


async def _wait_until_clean(seen: dict, temp: Path) -> None:
    deadline = time.monotonic() + 10
    while (_left_over(seen) or list(temp.iterdir())) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert not _left_over(seen), _left_over(seen)
    assert not list(temp.iterdir()), list(temp.iterdir())


@needs_nvcc
async def test_slow_typing_compiles_only_the_latest_version(tmp_path, monkeypatch):
    """A change stops the compile of the version it supersedes: one nvcc at a time, but for
    the few milliseconds the stopped one takes to notice (it polls every 50 ms). Without
    stopping, the superseded compile ran on beside the new one for its whole length."""
    editor, pid, _temp = await _compiling_server(tmp_path, monkeypatch)
    uri = next(iter(editor.docs))
    samples: list[int] = []
    for i in range(4):
        editor.type(uri, 0, 0, 0, 0, f"// edit {i}\n")
        for _ in range(15):                       # 1.5 s between keystrokes
            running = {g for _p, g, name in _descendants(pid).values() if name == "nvcc"}
            samples.append(len(running))
            await asyncio.sleep(0.1)
    log = (tmp_path / "dice-lsp.log").read_text()
    busy = [n for n in samples if n]
    assert busy and sum(n > 1 for n in busy) <= len(busy) // 10, samples
    assert log.count("stopped: a newer version superseded it") >= 3
    await stop(editor)


@needs_nvcc
async def test_shutdown_ends_nvcc_workers_and_temporary_files(tmp_path, monkeypatch):
    editor, pid, temp = await _compiling_server(tmp_path, monkeypatch)
    seen = _descendants(pid)
    assert await asyncio.wait_for(stop(editor), 30) == 0
    await _wait_until_clean(seen, temp)


@needs_nvcc
async def test_a_killed_server_leaves_no_nvcc_worker_or_temporary_files(tmp_path, monkeypatch):
    editor, pid, temp = await _compiling_server(tmp_path, monkeypatch)
    seen = _descendants(pid)
    os.kill(pid, signal.SIGKILL)
    await _wait_until_clean(seen, temp)
    await editor.client.stop()


@needs_nvcc
async def test_a_terminated_server_leaves_nothing_behind(tmp_path, monkeypatch):
    editor, pid, temp = await _compiling_server(tmp_path, monkeypatch)
    seen = _descendants(pid)
    os.kill(pid, signal.SIGTERM)
    await _wait_until_clean(seen, temp)
    await editor.client.stop()
