"""The language server end to end: the real `dice-lsp` process driven over stdio by an editor-like
client (see editor.py). Covers the issue's "Done when" list."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from dice_engine.intent import find_intents

from .editor import Editor, capabilities, needs_nvcc, start, stop

INTENT = "// @dice: y = relu(a) * 2.5 + b; a, b: f32[1048576]"
INTENT_FILE = f"""#include <cuda_runtime.h>

// Host code above and below the intent must never change.
{INTENT}

int main() {{ return 0; }}
"""
INTENT_LINE = 3
# Without a GPU, a design must beat the prior's design for its sketch by a clear margin: for a few
# long rows several sketches improve on each other, so a generation streams several edits.
STREAM_INTENT = "// @dice: s = sum(x, dim=1); x: f32[32, 262144]"
STREAM_FILE = INTENT_FILE.replace(INTENT, STREAM_INTENT)

STATIC_FILE = """#include <cuda_runtime.h>

__global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 0.5;
}

void launch(float* x, int n) { scale<<<(n + 255) / 256, 256>>>(x, n); }
"""
DOUBLE_LITERAL = "DICE-P001"
NVCC_MISSING = "DICE-E003"
UNSERVABLE = "DICE-I001"
STALE_REGION = "DICE-I002"
EDITED_REGION = "DICE-I004"


def codes(diagnostics: list[types.Diagnostic]) -> set[str]:
    return {str(d.code) for d in diagnostics}


def only_site(text: str):
    (site,) = find_intents(text)
    return site


def outside_region(text: str) -> tuple[str, str]:
    """The text above the intent's region and below it (both must survive generation intact)."""
    site = only_site(text)
    lines = text.splitlines(keepends=True)
    if site.region is None:
        return "".join(lines[:site.end_line + 1]), "".join(lines[site.end_line + 1:])
    return "".join(lines[:site.region.begin_line]), "".join(lines[site.region.end_line + 1:])


def progress_of(editor: Editor) -> list[list]:
    return [values for values in editor.progress().values() if values]


def ended(editor: Editor) -> list[types.WorkDoneProgressEnd]:
    return [v[-1] for v in progress_of(editor) if isinstance(v[-1], types.WorkDoneProgressEnd)]


async def change_settings(editor: Editor, dice: dict) -> None:
    """Change the client's `dice` section, notify the server, and wait until it has applied it."""
    seen = len(editor.client.log_messages)
    editor.client.set_configuration({"dice": dice})
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await editor.wait_for(lambda: any(m.message.startswith("dice_lsp.features.settings: settings changed")
                                      for m in editor.client.log_messages[seen:]))


async def generate_command(editor: Editor, uri: str, prefix: str = "DICE: Generate kernel") -> types.Command:
    return await editor.action_command(uri, INTENT_LINE, prefix)


# --- diagnostics ------------------------------------------------------------------------------

async def test_diagnostics_on_open_and_change_carry_the_version(session):
    editor = await session()
    uri = editor.open("scale.cu", STATIC_FILE)
    first = await editor.diagnostics(uri, version=1, where=lambda d: DOUBLE_LITERAL in codes(d))
    (finding,) = [d for d in first if d.code == DOUBLE_LITERAL]
    assert finding.range.start.line == 4 and finding.severity == types.DiagnosticSeverity.Warning

    version = editor.replace_text(uri, "* 0.5;", "* 0.5f;")
    assert version == 2
    await editor.diagnostics(uri, version=2, where=lambda d: DOUBLE_LITERAL not in codes(d))
    assert all(v in (1, 2) for v, _ in editor.published[uri])


async def test_static_diagnostics_are_not_published_for_a_version_already_left(session):
    editor = await session(settings={"compileOnChange": False})
    uri = editor.open("scale.cu", STATIC_FILE)
    await editor.diagnostics(uri, version=1)
    for i in range(20):                    # a burst of keystrokes, faster than the debounce
        editor.type(uri, 7, 0, 7, 0, f"// {i}\n")
    await editor.diagnostics(uri, version=21)
    versions = [v for v, _ in editor.published[uri]]
    # A result computed for a version the editor has left is dropped, so publications never go
    # back in version. (How many intermediate versions get published depends on how fast the
    # machine keeps up with the typing, so the test does not count them.)
    assert versions == sorted(versions) and versions[-1] == 21


async def test_malformed_intent_is_a_diagnostic_on_the_intent_line(session):
    editor = await session()
    bad = INTENT_FILE.replace("relu(a)", "reluu(a)")
    uri = editor.open("bad.cu", bad)
    diags = await editor.diagnostics(uri, where=lambda d: any(x.range.start.line == INTENT_LINE for x in d))
    (problem,) = [d for d in diags if d.range.start.line == INTENT_LINE]
    assert problem.severity == types.DiagnosticSeverity.Error
    assert problem.data["category"] == "intent" and "reluu" in problem.message

    command = await generate_command(editor, uri)
    result = await editor.execute(command)
    assert result["error"] and result["applied"] == 0
    assert editor.applied == [] and editor.text(uri) == bad


async def test_words_intents_never_get_a_guessed_size(session):
    editor = await session()
    words = INTENT_FILE.replace(INTENT, "// @dice: row-wise softmax of a fp32 matrix, one warp per row")
    uri = editor.open("words.cu", words)
    diags = await editor.diagnostics(uri, where=lambda d: UNSERVABLE in codes(d))
    (problem,) = [d for d in diags if d.code == UNSERVABLE]
    assert problem.range.start.line == INTENT_LINE and "no shape given" in problem.message
    line = words.splitlines()[INTENT_LINE]
    underlined = line[problem.range.start.character:problem.range.end.character]
    assert underlined == "softmax"


# --- generation and streaming -----------------------------------------------------------------

@needs_nvcc
async def test_generate_streams_edits_with_progress(session, tmp_path: Path):
    editor = await session(settings={"budget": 8, "streamEdits": True})
    uri = editor.open("rows.cu", STREAM_FILE)
    before, after = outside_region(STREAM_FILE)

    result = await editor.execute(await generate_command(editor, uri))

    assert result["error"] is None and result["stopped"] is None
    assert result["applied"] >= 2 and len(editor.applied) == result["applied"]
    for params in editor.applied:         # each edit: one versioned edit of one document
        (change,) = params.edit.document_changes
        assert change.text_document.uri == uri and change.text_document.version is not None
        assert len(change.edits) == 1
    text = editor.text(uri)
    site = only_site(text)
    assert site.region is not None and not site.region.stale and not site.region.edited
    assert outside_region(text) == (before, after)
    assert "__global__" in text and "_launch(" in text

    (values,) = progress_of(editor)
    kinds = [type(v).__name__ for v in values]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    reports = [v for v in values if isinstance(v, types.WorkDoneProgressReport)]
    assert len(reports) >= 2 and all(r.message.startswith("round ") for r in reports)
    assert values[-1].message.startswith("done:")
    log = (tmp_path / "dice-lsp.log").read_text()       # the log tells the generation's story too
    assert f"generation started in {uri} (arch sm_90): s = sum(" in log
    assert f"generation ended in {uri} after" in log and "s: done: round" in log


@needs_nvcc
async def test_cancel_request_stops_the_stream(session):
    editor = await session(settings={"budget": 400, "streamEdits": True})
    uri = editor.open("fused.cu", INTENT_FILE)
    msg_id, pending = editor.execute_later(await generate_command(editor, uri))
    await editor.wait_for(lambda: editor.applied)
    editor.cancel_request(msg_id)
    with pytest.raises(JsonRpcRequestCancelled):
        await pending
    (end,) = await editor.wait_for(lambda: ended(editor), timeout=30)
    assert end.message == "stopped: cancelled"
    settled = len(editor.applied)
    await asyncio.sleep(1.0)
    assert len(editor.applied) == settled
    assert only_site(editor.text(uri)).region is not None


@needs_nvcc
async def test_progress_cancel_stops_the_stream(session):
    editor = await session(settings={"budget": 400, "streamEdits": True})
    uri = editor.open("fused.cu", INTENT_FILE)
    _msg_id, pending = editor.execute_later(await generate_command(editor, uri))
    await editor.wait_for(lambda: editor.applied)
    (token,) = editor.progress().keys()
    editor.client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
                                  types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(pending, 30)
    assert result["stopped"] == "cancelled" and result["applied"] >= 1
    assert ended(editor)[0].message == "stopped: cancelled"


@needs_nvcc
async def test_second_generate_supersedes_the_first(session):
    editor = await session(settings={"budget": 400, "streamEdits": True})
    uri = editor.open("fused.cu", INTENT_FILE)
    command = await generate_command(editor, uri)
    _first_id, first = editor.execute_later(command)
    await editor.wait_for(lambda: editor.applied)

    await change_settings(editor, {"budget": 4})
    regenerate = await editor.action_command(uri, INTENT_LINE, "DICE: Regenerate kernel")
    second = await editor.execute(regenerate)

    first_result = await asyncio.wait_for(first, 30)
    assert first_result["stopped"] == "superseded by a newer generate"
    assert second["error"] is None and second["stopped"] is None
    site = only_site(editor.text(uri))
    assert site.region is not None and not site.region.edited
    assert editor.text(uri).count("@dice-begin") == 1


@needs_nvcc
async def test_user_edit_inside_the_region_stops_the_stream(session):
    editor = await session(settings={"budget": 400, "streamEdits": True})
    uri = editor.open("fused.cu", INTENT_FILE)
    _msg_id, pending = editor.execute_later(await generate_command(editor, uri))
    await editor.wait_for(lambda: editor.applied)
    region = only_site(editor.text(uri)).region
    editor.type(uri, region.begin_line + 1, 0, region.begin_line + 1, 0, "// my own note\n")
    typed_at = len(editor.applied)

    result = await asyncio.wait_for(pending, 30)
    assert result["stopped"] is not None
    assert "// my own note\n" in editor.text(uri)
    assert len(editor.applied) == typed_at
    assert only_site(editor.text(uri)).region.edited


@needs_nvcc
async def test_client_without_apply_edit_gets_the_final_kernel_as_the_action_edit(session):
    editor = await session(caps=capabilities(apply_edit=False, progress=False))
    uri = editor.open("fused.cu", INTENT_FILE)
    actions = await editor.code_actions(uri, INTENT_LINE)
    action = next(a for a in actions if a.title == "DICE: Generate kernel")
    resolved = await editor.resolve(action)
    assert resolved.command is None and resolved.edit is not None
    (change,) = resolved.edit.document_changes
    assert change.text_document.version == editor.version(uri)
    assert "@dice-begin" in change.edits[0].new_text and "__global__" in change.edits[0].new_text
    await editor.on_apply_edit(types.ApplyWorkspaceEditParams(edit=resolved.edit))
    assert only_site(editor.text(uri)).region is not None


# --- on save ----------------------------------------------------------------------------------

async def generated(editor: Editor, name: str = "fused.cu") -> str:
    uri = editor.open(name, INTENT_FILE)
    result = await editor.execute(await generate_command(editor, uri))
    assert result["error"] is None, result
    return uri


@needs_nvcc
async def test_stale_region_is_regenerated_on_save(session):
    editor = await session()
    uri = await generated(editor)
    editor.replace_text(uri, "f32[1048576]", "f32[2097152]")
    site = only_site(editor.text(uri))
    assert site.region.stale and not site.region.edited
    diags = await editor.diagnostics(uri, where=lambda d: STALE_REGION in codes(d))
    assert [d.range.start.line for d in diags if d.code == STALE_REGION] == [INTENT_LINE]
    applied = len(editor.applied)
    editor.save(uri)
    await editor.wait_for(lambda: len(editor.applied) > applied
                          and not only_site(editor.text(uri)).region.stale)
    await editor.wait_for(lambda: ended(editor) and len(ended(editor)) == 2)
    site = only_site(editor.text(uri))
    assert site.region.recorded_hash == site.hash and not site.region.edited


@needs_nvcc
async def test_hand_edited_region_is_left_alone_on_save(session):
    editor = await session()
    uri = await generated(editor)
    region = only_site(editor.text(uri)).region
    editor.type(uri, region.begin_line + 1, 0, region.begin_line + 1, 0, "// tuned by hand\n")
    editor.replace_text(uri, "f32[1048576]", "f32[2097152]")
    text = editor.text(uri)
    applied = len(editor.applied)
    editor.save(uri)
    diags = await editor.diagnostics(uri, where=lambda d: EDITED_REGION in codes(d))
    (note,) = [d for d in diags if d.code == EDITED_REGION]
    assert note.range.start.line == INTENT_LINE
    await asyncio.sleep(1.0)
    assert len(editor.applied) == applied and editor.text(uri) == text


@needs_nvcc
async def test_regenerating_a_hand_edited_region_asks_through_its_own_action(session):
    editor = await session()
    uri = await generated(editor)
    region = only_site(editor.text(uri)).region
    editor.type(uri, region.begin_line + 1, 0, region.begin_line + 1, 0, "// tuned by hand\n")
    titles = [a.title for a in await editor.code_actions(uri, INTENT_LINE)]
    assert "DICE: Regenerate kernel" not in titles
    command = await editor.action_command(uri, INTENT_LINE, "DICE: Regenerate kernel (replace your edits")
    result = await editor.execute(command)
    assert result["error"] is None and result["applied"] >= 1
    site = only_site(editor.text(uri))
    assert "// tuned by hand" not in editor.text(uri) and not site.region.edited


@needs_nvcc
async def test_the_vs_code_commands_generate_at_a_line_and_regenerate_stale_regions(session):
    editor = await session()
    uri = editor.open("fused.cu", INTENT_FILE)
    at = types.Command(title="", command="dice.generateAt", arguments=[{"uri": uri, "line": INTENT_LINE}])
    assert (await editor.execute(at))["applied"] >= 1
    editor.replace_text(uri, "f32[1048576]", "f32[2097152]")
    stale = types.Command(title="", command="dice.regenerateStale", arguments=[{"uri": uri}])
    assert await editor.execute(stale) == {"started": 1}
    await editor.wait_for(lambda: not only_site(editor.text(uri)).region.stale)
    nowhere = types.Command(title="", command="dice.generateAt", arguments=[{"uri": uri, "line": 0}])
    assert (await editor.execute(nowhere))["error"]


# --- hover, code lens, quick fixes ------------------------------------------------------------

@needs_nvcc
async def test_hover_and_code_lens_show_resources_and_generation(session):
    editor = await session()
    uri = await generated(editor)
    text = editor.text(uri)
    lines = text.splitlines()
    kernel_line = next(i for i, line in enumerate(lines) if "__global__" in line)
    name_column = lines[kernel_line].index("_kernel(")    # inside the kernel's name

    async def compiled_hover() -> str | None:
        value = await editor.hover(uri, kernel_line, name_column)
        return value if value and "registers:" in value else None

    hover = None
    for _ in range(120):
        if (hover := await compiled_hover()) is not None:
            break
        await asyncio.sleep(0.25)
    assert hover is not None, "no ptxas figures in the kernel hover"
    assert "occupancy" in hover and "design tokens" in hover and "sm_90" in hover
    assert "region: up to date" in hover

    intent_hover = await editor.hover(uri, INTENT_LINE, 5)
    assert "kernel `" in intent_hover and "region: up to date" in intent_hover

    lenses = await editor.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri)))
    titles = [lens.command.title for lens in lenses]
    assert any(t.startswith("DICE sm_90") and "regs" in t for t in titles), titles
    kernel_lines = {i for i, text in enumerate(lines) if "__global__" in text}
    assert {lens.range.start.line for lens in lenses} <= kernel_lines


async def test_did_you_mean_is_a_quick_fix_on_the_intent(session):
    editor = await session()
    text = "#include <cuda_runtime.h>\n// @dice: y = softmx(x, dim=1); x: f32[4096, 1024]\nint main() {}\n"
    uri = editor.open("typo.cu", text)
    await editor.diagnostics(uri, version=1, where=lambda d: "DICE-I001" in codes(d))
    actions = await editor.code_actions(uri, 1, only_kind=types.CodeActionKind.QuickFix)
    (fix,) = [a for a in actions if a.diagnostics and a.diagnostics[0].code == "DICE-I001"]
    assert fix.title == "DICE: Replace 'softmx' with 'softmax'"
    await editor.on_apply_edit(types.ApplyWorkspaceEditParams(edit=fix.edit))
    await editor.diagnostics(uri, version=2, where=lambda d: "DICE-I001" not in codes(d))
    assert editor.text(uri) == text.replace("softmx", "softmax")


async def test_launch_hover_and_quick_fix(session):
    editor = await session()
    uri = editor.open("scale.cu", STATIC_FILE)
    await editor.diagnostics(uri, version=1, where=lambda d: DOUBLE_LITERAL in codes(d))
    launch_line = 7
    hover = await editor.hover(uri, launch_line, STATIC_FILE.splitlines()[launch_line].index("<<<") + 1)
    assert hover is not None and "`scale`" in hover

    actions = await editor.code_actions(uri, 4, only_kind=types.CodeActionKind.QuickFix)
    (fix,) = [a for a in actions if a.diagnostics and a.diagnostics[0].code == DOUBLE_LITERAL]
    await editor.on_apply_edit(types.ApplyWorkspaceEditParams(edit=fix.edit))
    await editor.diagnostics(uri, version=2, where=lambda d: DOUBLE_LITERAL not in codes(d))
    assert "0.5f" in editor.text(uri)


# --- robustness -------------------------------------------------------------------------------

async def test_nvcc_missing_is_one_clear_diagnostic_and_the_rest_works(session):
    editor = await session(without_nvcc=True)
    uri = editor.open("scale.cu", STATIC_FILE)
    diags = await editor.diagnostics(uri, version=1, where=lambda d: NVCC_MISSING in codes(d))
    assert DOUBLE_LITERAL in codes(diags)
    (missing,) = [d for d in diags if d.code == NVCC_MISSING]
    assert "nvcc" in missing.message and "dice.nvccPath" in missing.message
    assert await editor.hover(uri, 2, 17) is not None


async def test_a_file_that_does_not_parse_still_gets_answers(session):
    editor = await session()
    garbage = "}}} __global__ void ((( <<<< >>> @@ \n\x00\n// @dice: \n#if\n"
    uri = editor.open("garbage.cu", garbage)
    await editor.diagnostics(uri, version=1)
    await editor.hover(uri, 0, 5)
    await editor.code_actions(uri, 2)
    editor.type(uri, 0, 0, 0, 0, "int x;\n")
    await editor.diagnostics(uri, version=2)
    assert editor.client._server.returncode is None


@needs_nvcc
async def test_clean_shutdown_while_generating(tmp_path: Path):
    editor = await start(tmp_path, settings={"budget": 400})
    uri = editor.open("fused.cu", INTENT_FILE)
    editor.execute_later(await generate_command(editor, uri))
    await editor.wait_for(lambda: editor.applied)
    assert await asyncio.wait_for(stop(editor), 30) == 0
    log = (tmp_path / "dice-lsp.log").read_text()
    assert "shutting down" in log


# --- settings ---------------------------------------------------------------------------------

async def test_settings_from_initialization_options_then_configuration(session):
    editor = await session(init_options={"arch": "sm_80"}, settings={"arch": None})
    uri = editor.open("fused.cu", INTENT_FILE)
    titles = [a.title for a in await editor.code_actions(uri, INTENT_LINE)]
    assert "DICE: Tune for sm_80 (A100-SXM4-80GB)" in titles

    await change_settings(editor, {"arch": "RTX 4090"})
    titles = [a.title for a in await editor.code_actions(uri, INTENT_LINE)]
    assert "DICE: Tune for sm_89 (GeForce RTX 4090)" in titles


async def test_blackwell_arch_setting_is_honoured_and_a_bogus_one_is_shown(session):
    editor = await session(init_options={"arch": "sm_100"}, settings={"arch": None})
    uri = editor.open("fused.cu", INTENT_FILE)
    titles = [a.title for a in await editor.code_actions(uri, INTENT_LINE)]
    assert "DICE: Tune for sm_100 (B200)" in titles

    await change_settings(editor, {"arch": "bogus"})
    warnings = [m.message for m in editor.client.messages if m.type == types.MessageType.Warning]
    assert any("dice.arch = 'bogus' ignored" in m and "keeping 'sm_100'" in m for m in warnings), warnings
    titles = [a.title for a in await editor.code_actions(uri, INTENT_LINE)]
    assert "DICE: Tune for sm_100 (B200)" in titles
