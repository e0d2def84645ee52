"""End-to-end sessions against the real `dice-lsp` process (pytest-lsp)."""
from __future__ import annotations

from pathlib import Path

import pytest

from .editor import Editor, start, stop

# Tiny budget: generation stays a few seconds, and still streams more than one round.
FAST = {"budget": 4, "compileDebounceMs": 200}


@pytest.fixture
async def session(tmp_path: Path):
    """Start a session with `await session(settings=..., ...)`; every one is shut down after the test."""
    editors: list[Editor] = []

    async def open_session(**kwargs) -> Editor:
        settings = {**FAST, **kwargs.pop("settings", {})}
        editor = await start(tmp_path, settings=settings, **kwargs)
        editors.append(editor)
        return editor

    yield open_session
    for editor in editors:
        if editor.client._server is not None and editor.client._server.returncode is None:
            await stop(editor)
