"""`resources` at the launch: dynamic shared memory a kernel may not take.

A launch `k<<<grid, block, bytes>>>` whose dynamic shared-memory size is a constant above 48 KiB
fails (cudaErrorInvalidValue, the kernel never runs) unless the kernel's limit was raised first
with `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`. DICE-M007 is
reported at such a launch when no call in the file raises that attribute for the kernel. A size
that is not a constant (read at run time) is not judged.
"""
from __future__ import annotations

import re

from .codes import CODES
from .findings import Finding
from .rule import Context, Rule
from .syntax import DEFAULT_DYNAMIC_SMEM

# the call's arguments up to the end of its statement (`ok = cudaFuncSetAttribute(...) == cudaSuccess;`)
_RAISES_LIMIT = re.compile(rb"cudaFuncSetAttribute\s*\((?P<args>[^;]*?MaxDynamicSharedMemorySize[^;]*);")


def launch_findings(ctx: Context) -> list[Finding]:
    if not ctx.fn.is_kernel or not ctx.launch.oversized or _raised(ctx.src.data, ctx.fn.name):
        return []
    out = []
    for size, start, end in ctx.launch.oversized:
        info = CODES["DICE-M007"]
        l0, c0 = _point(ctx.src.data, start)
        l1, c1 = _point(ctx.src.data, end)
        out.append(Finding(ctx.src.path, l0, ctx.src.column(l0, c0), l1, ctx.src.column(l1, c1),
                           info.category, "DICE-M007", info.severity, _message(ctx.fn.name, size),
                           data={"bytes": size}))
    return out


def _raised(data: bytes, kernel: str) -> bool:
    """Whether some call raises the kernel's dynamic shared-memory limit. A call for another of
    the file's kernels does not count; one through a pointer or a wrapper counts for every kernel."""
    for m in _RAISES_LIMIT.finditer(data):
        target = m.group("args").split(b",")[0]
        named = re.findall(rb"[A-Za-z_]\w*", target.split(b"<")[0])
        if not named or named[-1] == kernel.encode():
            return True
        if not re.search(rb"__global__[^;{]*?\b" + re.escape(named[-1]) + rb"\s*\(", data):
            return True
    return False


def _point(data: bytes, byte: int) -> tuple[int, int]:
    row = data.count(b"\n", 0, byte)
    return row, byte - (data.rfind(b"\n", 0, byte) + 1)


def _message(kernel: str, size: int) -> str:
    return (f"`{kernel}` is launched with {size} B ({size / 1024:g} KiB) of dynamic shared memory, "
            f"above the {DEFAULT_DYNAMIC_SMEM // 1024} KiB a kernel may take by default, and nothing raises "
            "its limit: the launch fails with cudaErrorInvalidValue and the kernel never runs. Call "
            f"`cudaFuncSetAttribute({kernel}, cudaFuncAttributeMaxDynamicSharedMemorySize, {size})` once "
            "before the launch (up to the GPU's opt-in limit, 227 KiB on sm_90).")


RULE = Rule("launch", ("DICE-M007",), launch_findings)
