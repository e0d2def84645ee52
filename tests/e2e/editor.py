"""The client side of an end-to-end session, behaving like an editor: it owns the documents,
applies the server's workspace edits only when their version matches (and then sends the
didChange a real editor would), types like a user, and records what the server published."""
from __future__ import annotations

import asyncio
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from dice_engine.compile import find_nvcc, nvcc_found

REPO = Path(__file__).resolve().parents[2]



# Generation compiles every candidate with nvcc; without one these tests cannot run.
needs_nvcc = pytest.mark.skipif(not nvcc_found(), reason="nvcc (CUDA toolkit) not found")


class HeldCompiler:
    """The real nvcc behind a gate the test holds, so that a generation is provably still
    running when the test acts on it (no race with a search that ends early). The server gets
    it through DICE_NVCC and a compile cache of its own (a warm cache would need no compile)."""

    def __init__(self, root: Path) -> None:
        self.hold = root / "nvcc.hold"            # while it exists, compiles wait
        self.waiting = root / "nvcc.waiting"      # created by a compile that reached the gate
        script = root / "nvcc-held"
        script.write_text(
            "#!/bin/sh\n"
            f'case " $* " in *" --version "*) exec "{find_nvcc()}" "$@";; esac\n'
            f'while [ -e "{self.hold}" ]; do touch "{self.waiting}"; sleep 0.02; done\n'
            f'exec "{find_nvcc()}" "$@"\n')
        script.chmod(0o755)
        self.env = {"DICE_NVCC": str(script), "DICE_CACHE_DIR": str(root / "cache")}

    def close_gate(self) -> None:
        self.hold.touch()

    def open_gate(self) -> None:
        self.hold.unlink(missing_ok=True)

    async def wait_until_held(self, timeout: float = 60.0) -> None:
        """Until a compile is waiting at the gate: the search cannot end before the gate opens."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.waiting.exists():
            assert loop.time() < deadline, "no compile reached the gate: the search ended first"
            await asyncio.sleep(0.02)
TIMEOUT = 60.0


def capabilities(*, apply_edit: bool = True, progress: bool = True,
                 resolve: bool = True) -> types.ClientCapabilities:
    """A client like VS Code (by default), or one lacking applyEdit / progress / resolve."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(apply_edit=apply_edit, configuration=True,
                                                    workspace_edit=types.WorkspaceEditClientCapabilities(
                                                        document_changes=True)),
        window=types.WindowClientCapabilities(work_done_progress=progress),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True,
                                                                     will_save_wait_until=True),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            code_action=types.CodeActionClientCapabilities(
                resolve_support=types.ClientCodeActionResolveOptions(properties=["edit", "command"])
                if resolve else None,
                data_support=True),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown])))


_BREAK = re.compile(r"\r\n|\r|\n")


class ClientDocument:
    """The editor's copy of a document, kept like VS Code keeps it: lines end only at "\n",
    "\r\n" or "\r" (a form feed or U+2028 is text), positions count UTF-16 code units. Written
    apart from the server's model (dice_lsp.sync) so that the two check each other."""

    def __init__(self, uri: str, source: str, version: int) -> None:
        self.uri, self.source, self.version = uri, source, version
        self.path = to_fs_path(uri)

    def line_starts(self) -> list[int]:
        return [0] + [m.end() for m in _BREAK.finditer(self.source)]

    def offset_at(self, position: types.Position) -> int:
        starts = self.line_starts()
        if position.line >= len(starts):
            return len(self.source)
        start = starts[position.line]
        end = len(self.source) if position.line + 1 == len(starts) else starts[position.line + 1]
        line = _BREAK.sub("", self.source[start:end])
        units = 0
        for index, char in enumerate(line):
            if units >= position.character:
                return start + index
            units += 2 if ord(char) > 0xFFFF else 1
        return start + len(line)

    def client_position_at_offset(self, offset: int) -> types.Position:
        starts = self.line_starts()
        line = max(i for i, s in enumerate(starts) if s <= offset)
        prefix = self.source[starts[line]:offset]
        return types.Position(line, sum(2 if ord(c) > 0xFFFF else 1 for c in prefix))

    def apply_change(self, event: types.TextDocumentContentChangePartial) -> None:
        start, end = self.offset_at(event.range.start), self.offset_at(event.range.end)
        self.source = self.source[:start] + event.text + self.source[max(start, end):]


class Editor:
    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.docs: dict[str, ClientDocument] = {}
        self.published: dict[str, list[tuple[int | None, list[types.Diagnostic]]]] = {}
        self.applied: list[types.ApplyWorkspaceEditParams] = []
        self.rejected: list[types.ApplyWorkspaceEditParams] = []
        self.hold_edits: asyncio.Event | None = None   # when set to a cleared Event, edits wait for it
        self.save_requests: list[dict[str, Any]] = []  # the server's dice/saveDocument notifications
        self._changed = asyncio.Condition()

    # --- handlers the server calls ------------------------------------------------------
    async def on_apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        if self.hold_edits is not None:
            await self.hold_edits.wait()
        for change in params.edit.document_changes or []:
            doc = self.docs[change.text_document.uri]
            if change.text_document.version is not None and change.text_document.version != doc.version:
                self.rejected.append(params)
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="version mismatch")
        self.applied.append(params)
        for change in params.edit.document_changes or []:
            # Edits of one TextDocumentEdit refer to the original text: apply bottom-up.
            for edit in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character),
                               reverse=True):
                self._change(change.text_document.uri, edit.range, edit.new_text)
        return types.ApplyWorkspaceEditResult(applied=True)

    async def on_publish(self, params: types.PublishDiagnosticsParams) -> None:
        self.published.setdefault(params.uri, []).append((params.version, list(params.diagnostics)))
        async with self._changed:
            self._changed.notify_all()

    # --- what a user does ------------------------------------------------------------------
    def open(self, name: str, text: str) -> str:
        path = self.root / name
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        self.docs[uri] = ClientDocument(uri, text, version=1)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="cuda", version=1, text=text)))
        return uri

    def text(self, uri: str) -> str:
        return self.docs[uri].source

    def version(self, uri: str) -> int:
        return self.docs[uri].version

    def type(self, uri: str, line: int, character: int, end_line: int, end_character: int, text: str) -> int:
        """A user edit (UTF-16 positions); returns the new version."""
        span = types.Range(types.Position(line, character), types.Position(end_line, end_character))
        self._change(uri, span, text)
        return self.version(uri)

    def replace_text(self, uri: str, old: str, new: str) -> int:
        source = self.text(uri)
        offset = source.index(old)
        doc = self.docs[uri]
        start = doc.client_position_at_offset(offset)
        end = doc.client_position_at_offset(offset + len(old))
        return self.type(uri, start.line, start.character, end.line, end.character, new)

    async def will_save_wait_until(self, uri: str) -> list[types.TextEdit]:
        params = types.WillSaveTextDocumentParams(types.TextDocumentIdentifier(uri),
                                                  types.TextDocumentSaveReason.Manual)
        edits = await asyncio.wait_for(self.client.text_document_will_save_wait_until_async(params), TIMEOUT)
        return list(edits or [])

    def apply_text_edits(self, uri: str, edits: list[types.TextEdit]) -> None:
        """Edits computed for the current text, applied bottom-up as an editor does."""
        for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            self._change(uri, edit.range, edit.new_text)

    def save(self, uri: str) -> None:
        Path(self.docs[uri].path).write_text(self.text(uri), encoding="utf-8")
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))

    def await_save_later(self, uri: str) -> asyncio.Future:
        """dice/awaitSave, as a client about to quit sends it: answered once what the last
        save of `uri` started has settled ({"save": bool, "version": int | None})."""
        fut = asyncio.wrap_future(self.client.protocol.send_request("dice/awaitSave", {"uri": uri}))

        async def answer() -> dict[str, Any]:
            return (await fut)._asdict()     # pygls answers custom requests with a namedtuple
        return asyncio.ensure_future(answer())

    def _change(self, uri: str, range_: types.Range, text: str) -> None:
        doc = self.docs[uri]
        event = types.TextDocumentContentChangePartial(range=range_, text=text)
        doc.apply_change(event)
        doc.version += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version), [event]))

    # --- waiting on the server -------------------------------------------------------------
    async def wait_for(self, predicate, timeout: float = TIMEOUT) -> Any:
        """Poll `predicate` (woken early by each publish) until it returns something truthy."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        async with self._changed:
            while not (result := predicate()):
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise TimeoutError(f"timed out after {timeout} s")
                try:
                    await asyncio.wait_for(self._changed.wait(), min(0.05, remaining))
                except asyncio.TimeoutError:
                    pass
            return result

    async def diagnostics(self, uri: str, *, version: int | None = None, where=None,
                          timeout: float = TIMEOUT) -> list[types.Diagnostic]:
        """The first diagnostics published for `version` (default: the current one) that satisfy `where`."""
        want = self.version(uri) if version is None else version

        def found() -> list[types.Diagnostic] | None:
            for v, diags in reversed(self.published.get(uri, [])):
                if v == want and (where is None or where(diags)):
                    return diags or [None]
            return None
        got = await self.wait_for(found, timeout)
        return [d for d in got if d is not None]

    async def execute(self, command: types.Command, msg_id: str | None = None) -> Any:
        params = types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
        fut = self.client.protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, params,
                                                msg_id=msg_id or str(uuid.uuid4()))
        return await asyncio.wait_for(asyncio.wrap_future(fut), TIMEOUT)

    def execute_later(self, command: types.Command) -> tuple[str, asyncio.Future]:
        msg_id = str(uuid.uuid4())
        params = types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
        fut = self.client.protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)
        return msg_id, asyncio.wrap_future(fut)

    def cancel_request(self, msg_id: str) -> None:
        self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    async def code_actions(self, uri: str, line: int, *,
                           only_kind: str | None = None) -> list[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            context=types.CodeActionContext(diagnostics=[]))
        actions = await asyncio.wait_for(self.client.text_document_code_action_async(params), TIMEOUT) or []
        return [a for a in actions if isinstance(a, types.CodeAction)
                and (only_kind is None or (a.kind or "").startswith(only_kind))]

    async def resolve(self, action: types.CodeAction) -> types.CodeAction:
        return await asyncio.wait_for(self.client.code_action_resolve_async(action), TIMEOUT)

    async def action_command(self, uri: str, line: int, title_prefix: str) -> types.Command:
        actions = await self.code_actions(uri, line)
        action = next(a for a in actions if a.title.startswith(title_prefix))
        resolved = await self.resolve(action)
        assert resolved.command is not None, resolved
        return resolved.command

    async def hover(self, uri: str, line: int, character: int) -> str | None:
        result = await asyncio.wait_for(self.client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(line, character))), TIMEOUT)
        return None if result is None else result.contents.value

    def progress(self) -> dict[Any, list[Any]]:
        return self.client.progress_reports


def server_command(log_file: Path) -> list[str]:
    return [sys.executable, "-m", "dice_lsp", "--log-file", str(log_file)]


def environment(*, without_nvcc: bool = False, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "server"), env.get("PYTHONPATH", "")])
    if without_nvcc:
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                      if p and not (Path(p) / "nvcc").exists())
        for var in ("CUDA_HOME", "CUDA_PATH", "CUDACXX"):
            env.pop(var, None)
        # The engine also looks in /usr/local/cuda/bin; DICE_NVCC (which wins over every
        # other place) naming a missing file hides that toolkit as well.
        env["DICE_NVCC"] = "/nonexistent/cuda/bin/nvcc"
    return env


def make_client_factory(editor_slot: list[Editor], root: Path, editor_class: type[Editor] = Editor,
                        configuration_delay_s: float = 0.0):
    """`configuration_delay_s`: the client answers workspace/configuration that much later (a
    slow editor), so that what the server does before it has the settings shows."""
    def factory() -> LanguageClient:
        client = LanguageClient()
        replaced = {types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS}
        if configuration_delay_s:
            replaced.add(types.WORKSPACE_CONFIGURATION)

            @client.feature(types.WORKSPACE_CONFIGURATION)
            async def configuration(params: types.ConfigurationParams) -> list[Any]:
                await asyncio.sleep(configuration_delay_s)
                return [client.get_configuration(section=item.section, scope_uri=item.scope_uri)
                        for item in params.items]

        register_lsp_features(client, {k: v for k, v in DEFAULT_CLIENT_FEATURES.items() if k not in replaced})
        editor = editor_class(client, root)

        # pygls tags handlers with attributes, which bound methods cannot carry: wrap them.
        @client.feature(types.WORKSPACE_APPLY_EDIT)
        async def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            return await editor.on_apply_edit(params)

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def publish(params: types.PublishDiagnosticsParams) -> None:
            await editor.on_publish(params)

        @client.feature("dice/saveDocument")
        def save_document(params: Any) -> None:
            editor.save_requests.append({"uri": params.uri, "version": params.version})

        editor_slot.append(editor)
        return client
    return factory


async def start(root: Path, *, settings: dict[str, Any] | None = None, without_nvcc: bool = False,
                env: dict[str, str] | None = None,
                caps: types.ClientCapabilities | None = None,
                init_options: dict[str, Any] | None = None, editor_class: type[Editor] = Editor,
                configuration_delay_s: float = 0.0) -> Editor:
    slot: list[Editor] = []
    factory = make_client_factory(slot, root, editor_class, configuration_delay_s)
    config = ClientServerConfig(server_command=server_command(root / "dice-lsp.log"), client_factory=factory,
                                server_env=environment(without_nvcc=without_nvcc, extra=env))
    client = await config.start()
    editor = slot[0]
    client.set_configuration({"dice": settings or {}})
    await client.initialize_session(types.InitializeParams(
        capabilities=caps or capabilities(), root_uri=root.as_uri(),
        initialization_options={"dice": init_options} if init_options else None))
    return editor


async def stop(editor: Editor) -> int | None:
    """shutdown + exit; returns the server's exit code."""
    client = editor.client
    await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
    code = client._server.returncode if client._server else None
    await client.stop()
    return code
