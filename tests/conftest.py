"""Tests marked `gpu` run only where an NVIDIA GPU and pycuda are present.

The check avoids initialising CUDA in the test process (the runner forks workers): pycuda is
looked up without importing it and the GPU is listed by `nvidia-smi`.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess

import pytest


@functools.lru_cache(maxsize=1)
def gpu_missing() -> str | None:
    """Why GPU tests cannot run here, or None when they can."""
    if importlib.util.find_spec("pycuda") is None:
        return "pycuda is not installed"
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "no NVIDIA driver (nvidia-smi not found)"
    try:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "nvidia-smi failed"
    return None if "GPU" in listed else "no NVIDIA GPU"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if gpu_items and (why := gpu_missing()):
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=why))


@pytest.fixture(autouse=True, scope="session")
def session_compile_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One compile cache for the whole run, outside the user's ~/.cache (subprocesses inherit it)."""
    if "DICE_CACHE_DIR" not in os.environ:
        os.environ["DICE_CACHE_DIR"] = str(tmp_path_factory.mktemp("dice-cache"))
