"""`resources` at the launch: dynamic shared memory a kernel may not take.

A launch `k<<<grid, block, bytes>>>` whose dynamic shared-memory size is a constant above 48 KiB
fails (cudaErrorInvalidValue, the kernel never runs) unless the kernel's limit was raised first
with `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`. DICE-M007 is
reported at such a launch when no call in the file raises that attribute for the kernel (a call
through a pointer counts for every kernel; `syntax.raised_smem_limits`). A size that is not a
constant (read at run time) is not judged.

DICE-M008: a launch whose constant block exceeds what any GPU launches (1024 threads along x or
y, 64 along z, 1024 in all): cudaErrorInvalidConfiguration, the kernel never runs.
"""
from __future__ import annotations

from .codes import CODES
from .findings import Finding
from .rule import Context, Rule
from .syntax import BLOCK_LIMITS, DEFAULT_DYNAMIC_SMEM, byte_point


def launch_findings(ctx: Context) -> list[Finding]:
    if not ctx.fn.is_kernel:        # the analyzer has dropped launches whose limit is raised
        return []
    out = [_at_launch(ctx, "DICE-M007", start, end, _message(ctx.fn.name, size), {"bytes": size})
           for size, start, end in ctx.launch.oversized]
    out += [_at_launch(ctx, "DICE-M008", start, end, _block_message(ctx.fn.name, block),
                       {"block": list(block)}) for block, start, end in ctx.launch.illegal_blocks]
    return out


def _at_launch(ctx: Context, code: str, start: int, end: int, message: str, data: dict) -> Finding:
    info = CODES[code]
    l0, c0 = byte_point(ctx.src.data, start)
    l1, c1 = byte_point(ctx.src.data, end)
    return Finding(ctx.src.path, l0, ctx.src.column(l0, c0), l1, ctx.src.column(l1, c1),
                   info.category, code, info.severity, message, data=data)


def _block_message(kernel: str, block: tuple[int, int, int]) -> str:
    x, y, z = block
    over = [f"{axis} {d} > {limit}" for axis, d, limit in zip("xyz", block, BLOCK_LIMITS) if d > limit]
    total = x * y * z
    if total > BLOCK_LIMITS[3]:
        over.append(f"{total} threads in all > {BLOCK_LIMITS[3]}")
    return (f"`{kernel}` is launched with a block of {x}x{y}x{z} ({'; '.join(over)}): no GPU launches it, "
            "the launch fails with cudaErrorInvalidConfiguration and the kernel never runs. Keep the block "
            f"within {BLOCK_LIMITS[3]} threads (x, y <= 1024, z <= 64) and cover the rest with more blocks.")


def _message(kernel: str, size: int) -> str:
    return (f"`{kernel}` is launched with {size} B ({size / 1024:g} KiB) of dynamic shared memory, "
            f"above the {DEFAULT_DYNAMIC_SMEM // 1024} KiB a kernel may take by default, and nothing raises "
            "its limit: the launch fails with cudaErrorInvalidValue and the kernel never runs. Call "
            f"`cudaFuncSetAttribute({kernel}, cudaFuncAttributeMaxDynamicSharedMemorySize, {size})` once "
            "before the launch (up to the GPU's opt-in limit, 227 KiB on sm_90).")


RULE = Rule("launch", ("DICE-M007", "DICE-M008"), launch_findings)
