"""`doctor()`: which of the tools GPU verification and dynamic diagnostics need are present."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
from typing import Any

from ..compile import NvccNotFound, find_nvcc


PYCUDA_HINT = "pip install pycuda (from a checkout: pip install -e '.[gpu]')"
_GPU_HINT = ("no NVIDIA GPU or driver seen; kernels are still generated and built by nvcc and ranked by the "
             "cost model, but not verified or timed")


def _run(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _tool(name: str, version_pattern: str) -> dict[str, Any]:
    path = shutil.which(name)
    if path is None:
        return {"found": False, "path": None, "version": None}
    text = _run([path, "--version"]) or ""
    match = re.search(version_pattern, text)
    return {"found": True, "path": path, "version": match.group(1) if match else None}


def doctor() -> dict[str, dict[str, Any]]:
    """{"nvcc"|"gpu"|"pycuda"|"ncu"|"compute-sanitizer": {"found": bool, "version": ..., ...}}.

    The GPU entry comes from nvidia-smi (name and driver version), so doctor never creates a
    CUDA context in the calling process."""
    report: dict[str, dict[str, Any]] = {}
    try:
        nvcc = find_nvcc(None)
        text = _run([nvcc, "--version"]) or ""
        match = re.search(r"release (\d+\.\d+)", text)
        report["nvcc"] = {"found": True, "path": nvcc, "version": match.group(1) if match else None}
    except NvccNotFound as exc:
        report["nvcc"] = {"found": False, "path": None, "version": None, "hint": str(exc)}
    smi = shutil.which("nvidia-smi")
    rows = _run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"]) if smi else None
    gpus = [[part.strip() for part in line.split(",")] for line in (rows or "").splitlines() if line.strip()]
    report["gpu"] = {"found": bool(gpus), "names": [g[0] for g in gpus],
                     "driver": gpus[0][1] if gpus and len(gpus[0]) > 1 else None}
    if not gpus:
        report["gpu"]["hint"] = _GPU_HINT if smi else "nvidia-smi not found: " + _GPU_HINT
    if importlib.util.find_spec("pycuda") is not None:
        report["pycuda"] = {"found": True, "version": importlib.metadata.version("pycuda")}
    else:
        report["pycuda"] = {"found": False, "version": None, "hint": PYCUDA_HINT}
    for tool in ("ncu", "compute-sanitizer"):
        report[tool] = _tool(tool, r"Version (\S+)")
        if not report[tool]["found"]:
            report[tool]["hint"] = (f"part of the CUDA Toolkit: put its bin/ folder on PATH; needed for "
                                    f"{'dice check --gpu' if tool == 'compute-sanitizer' else 'profiling'}")
    return report
