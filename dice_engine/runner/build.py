"""Candidate → shared library: the rendered region plus a tiny error shim, compiled by nvcc.

The shim lives in the same translation unit so that it shares the library's (static) CUDA
runtime: `cudaGetLastError` there sees the launcher's launch errors, which a separate runtime
would not. It is appended after the region, so line numbers (-lineinfo) match the region's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..compile import CompileResult, NvccNotFound, compile_cuda
from ..sketches.base import RenderedKernel

ERROR_SHIM = """
extern "C" int dice_runner_last_error(void) { return (int)cudaGetLastError(); }
extern "C" int dice_runner_synchronize(void) { return (int)cudaDeviceSynchronize(); }
extern "C" const char* dice_runner_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }
"""

_LAUNCHER = re.compile(r'extern\s+"C"\s+void\s+(\w+_launch)\s*\(')


@dataclass
class Built:
    library: Path | None
    error: str = ""
    result: CompileResult | None = None     # nvcc's result: messages and ptxas resources (None: no nvcc)


def launcher_symbol(rendered: RenderedKernel) -> str:
    """The exported launcher's name (`<name>_launch`), whether `launcher` holds the name or the code."""
    if re.fullmatch(r"\w+", rendered.launcher.strip()):
        return rendered.launcher.strip()
    match = _LAUNCHER.search(rendered.launcher) or _LAUNCHER.search(rendered.source)
    if match is None:
        raise ValueError(f"no extern \"C\" ..._launch function in the rendered {rendered.sketch} kernel")
    return match.group(1)


def build_library(source: str, arch: str, *, lineinfo: bool = True, filename: str = "kernel.cu",
                  cancel: Callable[[], bool] | None = None) -> Built:
    """`source` (one or several rendered regions) as a shared library; `cancel` stops nvcc early."""
    flags = ["-lineinfo"] if lineinfo else []
    try:
        result = compile_cuda(source.rstrip() + "\n" + ERROR_SHIM, arch, output="shared", flags=flags,
                              filename=filename, cancel=cancel)
    except NvccNotFound as exc:
        return Built(None, str(exc))
    if not result.ok or result.artifact is None:
        return Built(None, result.first_error() or "nvcc failed", result)
    return Built(result.artifact, "", result)
