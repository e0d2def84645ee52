"""Finding nvcc and asking its version (part of every cache key)."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

# Where toolkits usually live when nvcc is not on PATH (tests empty this to simulate "no CUDA").
FALLBACK_DIRS: list[str] = ["/usr/local/cuda/bin", "/opt/cuda/bin"]

HOW_TO_FIX = ("install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads) and put its "
              "bin/ directory on PATH, set CUDA_HOME, or point the `dice.nvccPath` setting "
              "(CLI: the DICE_NVCC environment variable) at the nvcc executable")


class NvccNotFound(RuntimeError):
    """nvcc cannot be found or run; the message says how to fix it."""


def find_nvcc(explicit: str | None = None) -> str:
    """The nvcc to run: `explicit`, else $DICE_NVCC, PATH, $CUDA_HOME/$CUDA_PATH, usual dirs."""
    if explicit:
        path = shutil.which(explicit)
        if path is None:
            raise NvccNotFound(f"nvcc not found at {explicit!r}: {HOW_TO_FIX}")
        return path
    if env := os.environ.get("DICE_NVCC"):
        return find_nvcc(env)
    if path := shutil.which("nvcc"):
        return path
    dirs = [str(Path(os.environ[v]) / "bin") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    for d in dirs + FALLBACK_DIRS:
        if path := shutil.which("nvcc", path=d):
            return path
    raise NvccNotFound(f"nvcc (the CUDA compiler) was not found: {HOW_TO_FIX}")


def nvcc_found() -> bool:
    """Whether `find_nvcc()` finds an nvcc (for callers that only need to know, such as test skips)."""
    try:
        find_nvcc()
    except NvccNotFound:
        return False
    return True


def nvcc_version(nvcc: str) -> str:
    """nvcc's full `--version` text (memoized per executable and modification time)."""
    return _version(nvcc, os.stat(nvcc).st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _version(nvcc: str, _mtime_ns: int) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise NvccNotFound(f"{nvcc} could not be run ({e}): {HOW_TO_FIX}") from e
    if out.returncode != 0:
        raise NvccNotFound(f"{nvcc} --version failed: {out.stderr.strip()}: {HOW_TO_FIX}")
    return out.stdout.strip()

