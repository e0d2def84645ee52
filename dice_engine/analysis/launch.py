"""`resources` at the launch: dynamic shared memory a kernel may not take.

A launch `k<<<grid, block, bytes>>>` whose dynamic shared-memory size is a constant above 48 KiB
fails (cudaErrorInvalidValue, the kernel never runs) unless the kernel's limit was raised first
with `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`. DICE-M007 is
reported at such a launch when no call in the file raises that attribute for the kernel (a call
through a pointer counts for every kernel; `syntax.raised_smem_limits`). A size that is not a
constant (read at run time) is not judged.
"""
from __future__ import annotations

from .codes import CODES
from .findings import Finding
from .rule import Context, Rule
from .syntax import DEFAULT_DYNAMIC_SMEM, byte_point


def launch_findings(ctx: Context) -> list[Finding]:
    if not ctx.fn.is_kernel:        # the analyzer has dropped launches whose limit is raised
        return []
    out = []
    for size, start, end in ctx.launch.oversized:
        info = CODES["DICE-M007"]
        l0, c0 = byte_point(ctx.src.data, start)
        l1, c1 = byte_point(ctx.src.data, end)
        out.append(Finding(ctx.src.path, l0, ctx.src.column(l0, c0), l1, ctx.src.column(l1, c1),
                           info.category, "DICE-M007", info.severity, _message(ctx.fn.name, size),
                           data={"bytes": size}))
    return out


def _message(kernel: str, size: int) -> str:
    return (f"`{kernel}` is launched with {size} B ({size / 1024:g} KiB) of dynamic shared memory, "
            f"above the {DEFAULT_DYNAMIC_SMEM // 1024} KiB a kernel may take by default, and nothing raises "
            "its limit: the launch fails with cudaErrorInvalidValue and the kernel never runs. Call "
            f"`cudaFuncSetAttribute({kernel}, cudaFuncAttributeMaxDynamicSharedMemorySize, {size})` once "
            "before the launch (up to the GPU's opt-in limit, 227 KiB on sm_90).")


RULE = Rule("launch", ("DICE-M007",), launch_findings)
