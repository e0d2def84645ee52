"""The generate commands: `dice.generate` (a code action's), `dice.generateAt` (an intent at a
line: VS Code's key binding) and `dice.accept` (write the best kernel so far and stop); and the
generation's document listeners: an edit of a running region or intent stops it, closing the
document stops its generations."""
from __future__ import annotations

import uuid
from typing import Any

from lsprotocol import types

from ..current import current_sites
from ..generation import Outcome, accept, run, stop_streams_edited_by_user
from ..server import DiceServer, command_work_done_token
from ..streams import GenerateRequest, Stream

COMMAND = "dice.generate"
GENERATE_AT_COMMAND = "dice.generateAt"
ACCEPT_COMMAND = "dice.accept"


async def execute(server: "DiceServer", request: GenerateRequest) -> dict[str, Any]:
    """The body of the generate commands: progress, $/cancelRequest hook, streaming."""
    token = command_work_done_token.get()
    if token is None and server.client_shows_progress:
        token = str(uuid.uuid4())
        await server.work_done_progress.create_async(token)
    stream = Stream(request)
    forget = server.on_cancel_request(server.protocol.msg_id, lambda: stream.cancel.cancel("cancelled"))
    try:
        outcome = await run(server, stream, apply=server.client_applies_edits, progress=token)
    finally:
        forget()
    if outcome.error:
        server.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"DICE: {outcome.error}"))
    return outcome.to_json()


def register(server: "DiceServer") -> None:
    def closed(uri: str) -> None:
        for (stream_uri, _hash), stream in list(server.streams.items()):
            if stream_uri == uri:
                stream.cancel.cancel("the document was closed")

    server.events.on("change", lambda uri: stop_streams_edited_by_user(server, uri))
    server.events.on("close", closed)

    @server.command(COMMAND)
    async def generate(ls: "DiceServer", raw: dict) -> dict[str, Any]:
        return await execute(ls, GenerateRequest.from_json(raw))

    @server.command(ACCEPT_COMMAND)
    async def accept_command(ls: "DiceServer", raw: dict) -> dict[str, Any]:
        """{uri, hash?}: take the best kernel so far of the running generation(s) and stop."""
        return {"accepted": accept(ls, raw["uri"], raw.get("hash"))}

    @server.command(GENERATE_AT_COMMAND)
    async def generate_at(ls: "DiceServer", raw: dict) -> dict[str, Any]:
        """{uri, line}: the intent at (or whose region contains) that line (VS Code's key binding)."""
        uri, line = raw["uri"], int(raw["line"])
        await current_sites(ls, uri)
        site = ls.documents.get(uri).site_at_line(line)
        if site is None:
            message = "place the cursor on a // @dice: intent (or inside its region)"
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, f"DICE: {message}"))
            return Outcome(error=message).to_json()
        return await execute(ls, GenerateRequest(uri, site.hash))
