"""Code actions: Generate / Regenerate / Tune for <arch> on an intent, and a quick fix for each
finding that carries one. Listing is cheap; the command (or, for clients that cannot apply
edits themselves, the whole generated kernel) is filled in by codeAction/resolve."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from dice_engine.arch import resolve as resolve_arch
from dice_engine.intent import IntentSite

from ..convert import Positions
from ..current import current_sites, snapshot
from ..generation import final_edit
from ..streams import GenerateRequest
from .generate import COMMAND

if TYPE_CHECKING:
    from ..server import DiceServer

GENERATE_KIND = types.CodeActionKind.RefactorRewrite + ".dice"


def _touches(site: IntentSite, first: int, last: int) -> bool:
    end = site.region.end_line if site.region is not None else site.end_line
    return site.line <= last and first <= end


def generate_actions(server: "DiceServer", uri: str, site: IntentSite) -> list[types.CodeAction]:
    """Generate / Regenerate / Tune; none for a region whose markers no longer pair up (its
    quick fix restores the lost @dice-end first)."""
    region = site.region
    if server.documents.get(uri).unpaired(site):
        return []
    if region is None:
        title, force = "DICE: Generate kernel", False
    elif region.edited:
        title, force = "DICE: Regenerate kernel (replace your edits in the region)", True
    else:
        title, force = "DICE: Regenerate kernel", False
    arch = resolve_arch(server.settings.arch)
    offers = [(title, GenerateRequest(uri, site.hash, None, force)),
              (f"DICE: Tune for {arch.name} ({arch.gpu_name})",
               GenerateRequest(uri, site.hash, arch.name, force))]
    actions = []
    for action_title, request in offers:
        action = types.CodeAction(title=action_title, kind=GENERATE_KIND,
                                  data={"kind": "generate", "request": request.to_json()})
        if not server.client_resolves("command") and server.client_applies_edits:
            action.command = types.Command(title=action_title, command=COMMAND, arguments=[request.to_json()])
        actions.append(action)
    return actions


def fix_actions(server: "DiceServer", uri: str, first: int, last: int) -> list[types.CodeAction]:
    """Quick fixes of findings computed for the document's current version only, so an
    edit never lands on text that has moved since."""
    state = server.documents.get(uri)
    doc = server.workspace.get_text_document(uri)
    positions = Positions(doc)
    actions = []
    for finding in state.published(doc.version):
        if finding.fix is None or not (finding.line <= last and first <= finding.end_line):
            continue
        computed_for = state.static.version if finding.source == "static" else state.compiler.version
        if computed_for != doc.version:
            continue
        change = types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version),
            edits=[positions.text_edit(e) for e in finding.fix.edits])
        actions.append(types.CodeAction(
            title=f"DICE: {finding.fix.title}", kind=types.CodeActionKind.QuickFix,
            diagnostics=[positions.diagnostic(finding)], is_preferred=True,
            edit=types.WorkspaceEdit(document_changes=[change])))
    return actions


def register(server: "DiceServer") -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[GENERATE_KIND, types.CodeActionKind.QuickFix], resolve_provider=True))
    async def code_action(ls: "DiceServer", params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        snap = snapshot(ls, uri)
        positions = Positions(ls.workspace.get_text_document(uri))
        first, _ = positions.server_position(params.range.start)
        last, _ = positions.server_position(params.range.end)
        sites = await current_sites(ls, uri)
        if not snap.current():
            return []          # the document moved on while the intents were found
        actions: list[types.CodeAction] = []
        for site in sites:
            if _touches(site, first, last):
                actions += generate_actions(ls, uri, site)
        return actions + fix_actions(ls, uri, first, last)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: "DiceServer", action: types.CodeAction) -> types.CodeAction:
        data: Any = action.data or {}
        if data.get("kind") != "generate" or action.command is not None or action.edit is not None:
            return action
        request = GenerateRequest.from_json(data["request"])
        if ls.client_applies_edits:
            action.command = types.Command(title=action.title, command=COMMAND, arguments=[request.to_json()])
        else:
            action.edit = await final_edit(ls, request)
        return action
