"""The language server with a model backend: the real `dice-lsp` process driven by an editor-like
client (tests/e2e/editor.py) and the scripted chat-completions server process. The model's
kernel streams into the region with progress, is flagged unverified (no GPU here), a cancel stops
a reply mid-stream, and with use=off (what the VS Code client sends in an untrusted workspace)
nothing reaches the endpoint."""
from __future__ import annotations

import asyncio
import shutil

import pytest
from replies import KERNELS, TOPK

pytest.importorskip("pytest_lsp")     # absent on the GPU image; the LSP is tested here
from e2e.editor import start, stop  # noqa: E402
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from dice_engine.api import UNVERIFIED_MODEL_KERNEL
from dice_engine.intent import find_intents

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")

FILE = f"#include <cuda_runtime.h>\n\n// @dice: {TOPK}\n\nint main() {{ return 0; }}\n"
INTENT_LINE = 2


@pytest.fixture
async def editors(tmp_path):
    started = []

    async def open_editor(llm: dict, configuration_delay_s: float = 0.0):
        editor = await start(tmp_path, settings={"budget": 2, "compileOnChange": False, "llm": llm},
                             configuration_delay_s=configuration_delay_s)
        started.append(editor)
        return editor

    yield open_editor
    for editor in started:
        if editor.client._server is not None and editor.client._server.returncode is None:
            await stop(editor)


def codes(diagnostics) -> set[str]:
    return {str(d.code) for d in diagnostics}


async def generate(editor, uri):
    return await editor.action_command(uri, INTENT_LINE, "DICE: Generate kernel")


def good_reply() -> dict:
    return {"content": f"```cuda\n{(KERNELS / 'topk_good.cu').read_text()}```"}


async def test_the_models_kernel_streams_into_the_region_marked_unverified(editors, scripted_model):
    model = scripted_model([{"content": "no code yet"}, good_reply()])
    editor = await editors({"baseUrl": model.url, "model": "scripted"})
    uri = editor.open("topk.cu", FILE)
    diagnostics = await editor.diagnostics(uri, version=1)
    assert "DICE-I001" not in codes(diagnostics)            # a configured model can serve it

    result = await editor.execute(await generate(editor, uri))
    assert result["error"] is None and result["applied"] == 1
    text = editor.text(uri)
    (site,) = find_intents(text)
    assert UNVERIFIED_MODEL_KERNEL in site.region.summary and "torch_f32_256x4_launch" in text
    assert text.startswith("#include <cuda_runtime.h>\n\n// @dice:")
    assert text.endswith("int main() { return 0; }\n")
    (values,) = [v for v in editor.progress().values() if v]
    reports = [v.message for v in values if isinstance(v, types.WorkDoneProgressReport)]
    assert reports == ["model scripted, round 0: the model's reply holds no CUDA code (it begins: "
                       "'no code yet')",
                       "model scripted, round 1: compiled and passed the checks (not verified: no GPU)",
                       "round 1/2: model:scripted (model=scripted, round=1) — written by a model, not "
                       "verified (no GPU)"]
    assert len(model.requests()) == 2

    flagged = await editor.diagnostics(uri, where=lambda d: "DICE-I005" in codes(d))
    (note,) = [d for d in flagged if d.code == "DICE-I005"]
    assert note.range.start.line == INTENT_LINE and note.severity == types.DiagnosticSeverity.Warning


async def test_a_file_opened_before_the_settings_arrive_is_analysed_with_them(editors, scripted_model):
    """The server pulls dice.* on `initialized`; this client answers 3 s later and the file is
    opened meanwhile. No diagnostics of it may come from the default settings (DICE-I001: only a
    model could serve the intent), and once the settings are in, its findings are published.
    Before the server waited for its settings, the static pass ran at once with the defaults and
    published DICE-I001 (seen here, and once in a loaded CI run without the delay)."""
    model = scripted_model([good_reply()])
    editor = await editors({"baseUrl": model.url, "model": "scripted"}, configuration_delay_s=3.0)
    uri = editor.open("topk.cu", FILE)
    # the open's first (empty) publish, then the static pass's findings
    await editor.wait_for(lambda: len(editor.published.get(uri, [])) >= 2, timeout=30)
    published = editor.published.get(uri, [])
    assert all(version == 1 for version, _ in published)
    assert not any("DICE-I001" in codes(diagnostics) for _, diagnostics in published), published


async def test_a_cancel_stops_the_model_mid_reply(editors, scripted_model):
    slow = good_reply() | {"pause_s": 0.2}                  # about 20 s of events
    model = scripted_model([slow])
    editor = await editors({"baseUrl": model.url, "model": "scripted"})
    uri = editor.open("topk.cu", FILE)
    msg_id, pending = editor.execute_later(await generate(editor, uri))
    await editor.wait_for(lambda: model.requests())
    await asyncio.sleep(0.5)
    editor.cancel_request(msg_id)
    with pytest.raises(JsonRpcRequestCancelled):
        await pending
    ends = await editor.wait_for(lambda: [v[-1] for v in editor.progress().values()
                                          if v and isinstance(v[-1], types.WorkDoneProgressEnd)], timeout=10)
    assert ends[0].message == "stopped: cancelled"
    assert editor.applied == [] and find_intents(editor.text(uri))[0].region is None


async def test_with_use_off_nothing_reaches_the_endpoint(editors, scripted_model):
    model = scripted_model([good_reply()])
    editor = await editors({"baseUrl": model.url, "model": "scripted", "use": "off"})
    uri = editor.open("topk.cu", FILE)
    diagnostics = await editor.diagnostics(uri, where=lambda d: "DICE-I001" in codes(d))
    (problem,) = [d for d in diagnostics if d.code == "DICE-I001"]
    assert "only a model can write a kernel" in problem.message
    result = await editor.execute(await generate(editor, uri))
    assert "only a model can write a kernel" in result["error"] and result["applied"] == 0
    await asyncio.sleep(0.5)
    assert model.requests() == []
