"""Shared pieces of the KernelBench front end's tests: the task files and one translation per
task (real tracing, real kernel search with a budget of one, real nvcc for sm_90)."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from dice_engine.kernelbench import Translation, translate

TASKS = Path(__file__).parent / "tasks"
CHEATS = Path(__file__).parent / "cheats"


def load_module(path: Path, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module


@pytest.fixture(scope="session")
def translations(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Translation, Path]]:
    """Translated lazily, once per task per session."""
    cache: dict[str, tuple[Translation, Path]] = {}
    out_dir = tmp_path_factory.mktemp("model_new")

    class Lazy(dict):
        def __missing__(self, stem: str) -> tuple[Translation, Path]:
            t = translate(TASKS / f"{stem}.py", arch="sm_90", budget=1)
            path = out_dir / f"{stem}_dice.py"
            path.write_text(t.text)
            self[stem] = (t, path)
            return self[stem]

    return Lazy(cache)
