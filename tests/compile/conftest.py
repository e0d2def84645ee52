from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Each test compiles into its own cache directory."""
    monkeypatch.setenv("DICE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"
