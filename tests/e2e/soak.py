"""The soak: a real `dice-lsp` driven like an editor by a random user for thousands of edits
(inside and outside regions, on markers and intents, with form feeds, U+2028, U+0085, CRLF and
emoji), with generation, forced regeneration, cancellations, saves, hovers, code lenses and
code actions interleaved. It checks what issue 19 asks:

- no server edit changes a byte outside a region: every character of the document carries its
  origin (typed outside a region, typed inside one, written by the server), and a server edit
  may only replace text it wrote or that was typed inside a region;
- every published diagnostic lies inside the text of the version it is published for;
- no request answers with an error other than a cancellation, the log holds no error, and the
  server is alive at the end and shuts down cleanly.

Used by tests/e2e/test_soak.py (short form) and benchmarks/lsp_soak.py (long form)."""
from __future__ import annotations

import asyncio
import random
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcRequestCancelled

from dice_engine.intent import IntentError, IntentSite, find_intents, parse_intent

from .editor import ClientDocument, Editor, start, stop

_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_START = r"(?:^|(?<=[\r\n]))"
_REGION = re.compile(_LINE_START + r"[ \t]*//\s*@dice-begin\b.*?"
                     + _LINE_START + r"[ \t]*//\s*@dice-end\b[^\r\n]*", re.DOTALL)
INTENTS = ["// @dice: y = relu(x); x: f32[4096]",
           "// @dice: y = a * 2.0 + b; a, b: f32[8192]",
           "// @dice: y = sigmoid(x); x: f32[2048]"]
START = ("#include <cuda_runtime.h>\n"
         "// page one\f of the file \u2028 with a line separator\n"
         "int user_a = 1;  // caf\u00e9 \U0001F600\r\n"
         f"{INTENTS[0]}\n"
         "int user_b = 2;\x85 // next line\n"
         "\n"
         f"{INTENTS[1]}\r\n"
         "__global__ void mine(float* x) { x[threadIdx.x] *= 2.0f; }\n"
         f"{INTENTS[2]}\n"
         "int user_c = 3;\n"
         "// @dice-end\n")
SNIPPETS = ["x", "int q = 0;", "\n", "\r\n", "\f", "\u2028", "\x85", "\U0001F600", "\u00e9", " ",
            "// note\n", "x[i] = 0.5;\n", "__syncthreads();\n", "(", ")", "{", "}", "\t"]
MARKER_EDITS = ("delete-end", "delete-begin", "duplicate-end", "break-marker", "edit-intent",
                "type-in-region")
LINE_BREAK_UNITS = {"\r\n": 2, "\r": 1, "\n": 1}


@dataclass
class Figures:
    edits: int = 0                      # user edits sent
    server_edits: int = 0               # region edits the server made that were applied
    server_edits_refused: int = 0       # refused by the editor (the user typed meanwhile)
    bytes_outside_regions: int = 0      # user text outside any region that a server edit replaced
    publishes: int = 0
    diagnostics: int = 0
    invalid_positions: int = 0
    errors: int = 0                     # error answers (other than cancellations) + logged errors
    generates: int = 0
    forced: int = 0
    cancelled: int = 0
    saves: int = 0
    requests: int = 0                   # hovers, code lenses, code actions
    seconds: float = 0.0
    outcomes: list[str] = field(default_factory=list)   # how each generate ended
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def utf16(text: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


def lines_of(text: str) -> list[str]:
    """The lines as the LSP counts them, without terminators."""
    return _BREAK.split(text)


class SoakDocument(ClientDocument):
    """The editor's document, each character tagged with where it came from: "U" typed outside
    any region, "R" typed inside one, "S" written by the server."""

    def __init__(self, uri: str, source: str, version: int) -> None:
        super().__init__(uri, source, version)
        self.tags = ["U"] * len(source)

    def region_spans(self) -> list[tuple[int, int]]:
        """(start, end) offsets of each region: a begin marker line's start to the end of the
        next end marker line. Wider than the engine's notion (which also wants the intent right
        above): text typed there counts as typed inside a region, a lenient oracle."""
        return [m.span() for m in _REGION.finditer(self.source)]

    def change(self, event: types.TextDocumentContentChangePartial, origin: str) -> str:
        """Apply a change made by the user ("user") or the server ("server"); returns the user
        text outside regions that it replaced (only a server edit can be at fault)."""
        start, end = self.offset_at(event.range.start), self.offset_at(event.range.end)
        end = max(start, end)
        if origin == "server":
            lost = "".join(c for c, tag in zip(self.source[start:end], self.tags[start:end]) if tag == "U")
            tag = "S"
        else:
            lost = ""
            tag = "R" if any(a < start <= b for a, b in self.region_spans()) else "U"
        self.source = self.source[:start] + event.text + self.source[end:]
        self.tags[start:end] = [tag] * len(event.text)
        return lost


class SoakEditor(Editor):
    """An Editor whose documents carry origins, that keeps every version's text and checks
    every publish against the text of its version."""

    def __init__(self, client: Any, root: Path) -> None:
        super().__init__(client, root)
        self.figures = Figures()
        self.history: dict[tuple[str, int], str] = {}
        self._server_editing = False

    def open(self, name: str, text: str) -> str:
        uri = super().open(name, text)
        self.docs[uri] = SoakDocument(uri, text, 1)
        self.history[(uri, 1)] = text
        return uri

    def _change(self, uri: str, range_: types.Range, text: str) -> None:
        doc = self.docs[uri]
        assert isinstance(doc, SoakDocument)
        event = types.TextDocumentContentChangePartial(range=range_, text=text)
        lost = doc.change(event, "server" if self._server_editing else "user")
        if lost:
            self.figures.bytes_outside_regions += len(lost.encode("utf-8", "surrogatepass"))
            self.figures.notes.append(f"v{doc.version + 1}: a server edit replaced {lost[:60]!r}")
        doc.version += 1
        self.history[(uri, doc.version)] = doc.source
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version), [event]))

    async def on_apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self._server_editing = True
        try:
            result = await super().on_apply_edit(params)
        finally:
            self._server_editing = False
        if result.applied:
            self.figures.server_edits += 1
        else:
            self.figures.server_edits_refused += 1
        return result

    async def on_publish(self, params: types.PublishDiagnosticsParams) -> None:
        self.figures.publishes += 1
        text = self.history.get((params.uri, params.version)) if params.version is not None else None
        for diagnostic in params.diagnostics:
            self.figures.diagnostics += 1
            if text is None or not valid_range(lines_of(text), diagnostic.range):
                self.figures.invalid_positions += 1
                self.figures.notes.append(f"v{params.version}: {diagnostic.code} at {diagnostic.range}")
        await super().on_publish(params)


def valid_range(lines: list[str], range_: types.Range) -> bool:
    def valid(position: types.Position) -> bool:
        return 0 <= position.line < len(lines) and 0 <= position.character <= utf16(lines[position.line])
    start, end = range_.start, range_.end
    return valid(start) and valid(end) and (start.line, start.character) <= (end.line, end.character)


def _parses(intent: str) -> bool:
    try:
        parse_intent(intent)
    except IntentError:
        return False
    return True


# --- the random user --------------------------------------------------------------------------

class User:
    def __init__(self, editor: SoakEditor, uri: str, rng: random.Random) -> None:
        self.editor, self.uri, self.rng = editor, uri, rng

    @property
    def doc(self) -> SoakDocument:
        doc = self.editor.docs[self.uri]
        assert isinstance(doc, SoakDocument)
        return doc

    def _replace(self, start: int, end: int, text: str) -> None:
        doc = self.doc
        a, b = doc.client_position_at_offset(start), doc.client_position_at_offset(end)
        self.editor.type(self.uri, a.line, a.character, b.line, b.character, text)
        self.editor.figures.edits += 1

    def _safe_offset(self, offset: int) -> int:
        """Never inside a surrogate pair's code point or between "\\r" and "\\n"."""
        source = self.doc.source
        offset = max(0, min(offset, len(source)))
        if 0 < offset < len(source) and source[offset - 1] == "\r" and source[offset] == "\n":
            offset -= 1
        return offset

    def random_edit(self) -> None:
        source = self.doc.source
        roll = self.rng.random()
        if roll < 0.12:
            self.marker_edit(self.rng.choice(MARKER_EDITS))
            return
        start = self._safe_offset(self.rng.randint(0, len(source)))
        if roll < 0.55 or len(source) < 200:       # typing grows the file, deleting shrinks it
            self._replace(start, start, self.rng.choice(SNIPPETS))
        else:
            end = self._safe_offset(start + self.rng.randint(1, 12))
            self._replace(start, end, self.rng.choice(["", "", self.rng.choice(SNIPPETS)]))

    def servable_site(self) -> IntentSite | None:
        """An intent the engine can serve; now and then (or when none is left) the user writes
        a fresh one on a line of its own first, as one does before generating."""
        sites = [s for s in find_intents(self.doc.source) if _parses(s.text)]
        if sites and self.rng.random() < 0.7:
            return self.rng.choice(sites)
        intent = self.rng.choice(INTENTS)
        starts = self.doc.line_starts()
        at = self.rng.choice(starts)
        self._replace(at, at, f"\n{intent}\n\n")
        return next((s for s in find_intents(self.doc.source) if s.text == intent[len("// @dice: "):]), None)

    def _line_span(self, line: int) -> tuple[int, int]:
        starts = self.doc.line_starts()
        end = starts[line + 1] if line + 1 < len(starts) else len(self.doc.source)
        return starts[line], end

    def marker_edit(self, kind: str) -> None:
        lines = lines_of(self.doc.source)
        ends = [i for i, t in enumerate(lines) if t.lstrip().startswith("// @dice-end")]
        begins = [i for i, t in enumerate(lines) if t.lstrip().startswith("// @dice-begin")]
        intents = [i for i, t in enumerate(lines) if t.lstrip().startswith("// @dice:")]
        if kind == "delete-end" and ends:
            self._replace(*self._line_span(self.rng.choice(ends)), "")
        elif kind == "delete-begin" and begins:
            self._replace(*self._line_span(self.rng.choice(begins)), "")
        elif kind == "duplicate-end" and ends:
            start, _ = self._line_span(self.rng.choice(ends))
            self._replace(start, start, "// @dice-end\n")
        elif kind == "break-marker" and (begins or ends):
            start, _ = self._line_span(self.rng.choice(begins + ends))
            self._replace(start, start + 1, "")
        elif kind == "edit-intent" and intents:
            line = self.rng.choice(intents)
            match = re.search(r"\d+\]", lines[line])
            if match:
                start, _ = self._line_span(line)
                size = str(self.rng.choice([1024, 2048, 4096]))
                self._replace(start + match.start(), start + match.end() - 1, size)
        elif kind == "type-in-region" and begins:
            _, after_begin = self._line_span(self.rng.choice(begins))
            self._replace(after_begin, after_begin, self.rng.choice(["// mine\n", "x;\n", "\f\n"]))
        else:
            start = self._safe_offset(self.rng.randint(0, len(self.doc.source)))
            self._replace(start, start, self.rng.choice(INTENTS) + "\n")


# --- the session ------------------------------------------------------------------------------

async def _request(editor: SoakEditor, coro: Any) -> None:
    """A request, answered within 30 s or counted as an error. The request itself is never
    cancelled here (pygls' client cannot take an answer for a request it cancelled)."""
    editor.figures.requests += 1
    task = asyncio.ensure_future(coro)
    try:
        await asyncio.wait_for(asyncio.shield(task), 30)
    except JsonRpcRequestCancelled:
        pass
    except JsonRpcException as exc:
        editor.figures.errors += 1
        editor.figures.notes.append(f"request failed: {exc}")
    except (TimeoutError, asyncio.TimeoutError):
        editor.figures.errors += 1
        editor.figures.notes.append("a request got no answer within 30 s")


def _alive(editor: SoakEditor) -> bool:
    server = editor.client._server
    return server is not None and server.returncode is None


async def _finish(editor: SoakEditor, uri: str, pending: list[tuple[str, asyncio.Future]]) -> None:
    """Collect the generations' outcomes, wait for the last version's publish, shut down."""
    figures = editor.figures
    for _msg_id, future in pending:
        try:
            outcome = await asyncio.wait_for(future, 120)
        except JsonRpcRequestCancelled:
            continue
        except (JsonRpcException, TimeoutError, asyncio.TimeoutError) as exc:
            figures.errors += 1
            figures.notes.append(f"generate failed: {exc!r}")
            continue
        error = (outcome or {}).get("error") or ""
        applied = (outcome or {}).get("applied")
        figures.outcomes.append(error or (outcome or {}).get("stopped") or f"applied {applied}")
        if error.startswith("generation failed"):        # an exception inside the server
            figures.errors += 1
            figures.notes.append(error)
    await editor.diagnostics(uri, timeout=120)            # the last version gets its publish
    code = await asyncio.wait_for(stop(editor), 60)
    if code != 0:
        figures.errors += 1
        figures.notes.append(f"the server's exit code after shutdown and exit: {code}")


async def run_soak(root: Path, *, edits: int, seed: int, budget: int = 2,
                   time_limit_s: float = 80.0) -> Figures:
    """Drive one server through `edits` random edits (fewer if `time_limit_s` runs out first)."""
    rng = random.Random(seed)
    editor = await start(root, settings={"budget": budget, "compileDebounceMs": 300},
                         editor_class=SoakEditor)
    assert isinstance(editor, SoakEditor)
    figures = editor.figures
    began = time.monotonic()
    uri = editor.open("soak.cu", START)
    user = User(editor, uri, rng)
    pending: list[tuple[str, asyncio.Future]] = []
    while figures.edits < edits and time.monotonic() - began < time_limit_s:
        if not _alive(editor):
            figures.errors += 1
            server = editor.client._server
            figures.notes.append(f"the server exited during the soak (after {figures.edits} edits, "
                                 f"exit status {server.returncode if server else None})")
            break
        user.random_edit()
        step = figures.edits
        if step % 113 == 0:
            site = user.servable_site()
            if site is not None:
                force = rng.random() < 0.5
                command = types.Command(title="generate", command="dice.generate",
                                        arguments=[{"uri": uri, "hash": site.hash, "force": force}])
                before = figures.server_edits
                pending.append(editor.execute_later(command))
                figures.generates += 1
                figures.forced += force
                if rng.random() < 0.6:   # the user waits for the kernel, then types on while it streams
                    try:
                        await editor.wait_for(lambda seen=before: figures.server_edits > seen, timeout=2.5)
                    except TimeoutError:
                        pass
                else:
                    await asyncio.sleep(rng.choice([0.02, 0.2]))
        if step % 151 == 0 and pending:
            msg_id, _future = rng.choice(pending)
            editor.cancel_request(msg_id)
            figures.cancelled += 1
        if step % 53 == 0:
            editor.save(uri)
            figures.saves += 1
        if step % 67 == 0:
            line = rng.randint(0, len(lines_of(user.doc.source)) - 1)
            document = types.TextDocumentIdentifier(uri)
            here = types.Range(types.Position(line, 0), types.Position(line, 0))
            await _request(editor, editor.client.text_document_hover_async(
                types.HoverParams(document, here.start)))
            await _request(editor, editor.client.text_document_code_lens_async(
                types.CodeLensParams(document)))
            await _request(editor, editor.client.text_document_code_action_async(types.CodeActionParams(
                document, here, types.CodeActionContext(diagnostics=[]))))
        if step % 7 == 0:
            await asyncio.sleep(0.005)     # typing speed: bursts with short breaks
    if _alive(editor):
        await _finish(editor, uri, pending)
    else:
        await editor.client.stop()
    logged = [line for line in (root / "dice-lsp.log").read_text(errors="replace").splitlines()
              if " ERROR " in line or "Traceback" in line]
    figures.errors += len(logged)
    figures.notes += logged[:10]
    figures.seconds = round(time.monotonic() - began, 1)
    return figures
