"""Wiring of the `dice.*` settings: read at initialize, pulled with workspace/configuration
once initialized and on didChangeConfiguration; bad values shown to the user once."""
from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

from ..gpu import gpu_runner
from ..log import attach_client_handler
from ..server import DiceServer
from ..settings import SECTION, describe, merge
from .. import status
from .diagnostics import refresh_all, warm_up_worker

log = logging.getLogger(__name__)

# How long a settings pull waits for the client: the diagnostics and compiles of documents opened
# meanwhile wait for the first one (DiceServer.settings_ready), so a client that never answers
# must not stall them.
CONFIGURATION_TIMEOUT_S = 10.0


# --- wiring -----------------------------------------------------------------------------------

def register(server: "DiceServer") -> None:
    problems: list[str] = []     # bad settings, shown once the client can take messages

    def show_problems(ls: "DiceServer") -> None:
        for line in dict.fromkeys(problems):
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, line))
        problems.clear()

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: "DiceServer", params: types.InitializeParams) -> None:
        ls.settings = merge(ls.settings, params.initialization_options, problems)

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: "DiceServer", _params: types.InitializedParams) -> None:
        attach_client_handler(ls, asyncio.get_running_loop())
        await pull(ls, problems)
        show_problems(ls)
        ls.documents.set_arch(ls.settings.arch)
        ls.settings_ready.set()
        log.info("dice-lsp ready: %s", describe(ls.settings))
        ls.workers.warm_up(warm_up_worker)
        await ls.workers.in_background(gpu_runner, ls)
        status.send(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_did_change_configuration(ls: "DiceServer",
                                          params: types.DidChangeConfigurationParams) -> None:
        if ls.client_pulls_configuration:
            await pull(ls, problems)
        else:
            ls.settings = merge(ls.settings, params.settings, problems)
        show_problems(ls)
        ls.documents.set_arch(ls.settings.arch)
        log.info("settings changed: %s", describe(ls.settings))
        await ls.workers.in_background(gpu_runner, ls)
        status.send(ls)
        refresh_all(ls)


async def pull(server: "DiceServer", problems: list[str] | None = None) -> None:
    """Ask the client for the `dice` section (workspace/configuration), when it can answer."""
    if not server.client_pulls_configuration:
        return
    try:
        request = server.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)]))
        (section,) = await asyncio.wait_for(request, CONFIGURATION_TIMEOUT_S)
    except Exception as exc:  # a client that fails the request or never answers keeps the settings we have
        log.warning("workspace/configuration failed: %s", exc or type(exc).__name__)
        return
    server.settings = merge(server.settings, section, problems)
