"""The CUDA occupancy calculator: how many blocks of a kernel fit on one SM at once.

Follows NVIDIA's CUDA Occupancy Calculator and `cuda_occupancy.h`:
- a block occupies ceil(threads / 32) warps;
- registers are allocated per warp, `registers × 32` rounded up to the allocation unit (256),
  and the warps the register file can hold are rounded down to the warp allocation
  granularity (4: the register file is split among four SM sub-partitions);
- shared memory per block is its static + dynamic size plus the driver's per-block reservation
  (1 KiB on sm_80+), rounded up to the allocation unit, against the largest carveout;
- blocks per SM and warps per SM are capped by the hardware.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .tables import ArchSpec, resolve

WARP_ALLOCATION_GRANULARITY = 4   # every architecture in the tables (compute capability >= 3.0)

# When two limits allow the same number of blocks, the one named first is reported.
_LIMIT_ORDER = ("warps", "blocks per SM", "registers", "shared memory")


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    fraction: float                 # active warps / the SM's maximum warps
    limiter: str                    # "registers" | "shared memory" | "block size" | "blocks per SM" | "warps"
    limits: dict[str, int] = field(default_factory=dict)   # blocks per SM each resource alone allows


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def occupancy(arch: ArchSpec | str, threads_per_block: int, registers_per_thread: int,
              smem_per_block: int = 0) -> Occupancy:
    """Occupancy of a kernel using `registers_per_thread` (0: unknown, not limiting) and
    `smem_per_block` bytes of static + dynamic shared memory, launched with `threads_per_block`."""
    spec = resolve(arch) if isinstance(arch, str) else arch
    if not 0 < threads_per_block <= spec.max_threads_per_block:
        return Occupancy(0, 0, 0.0, "block size")
    warps_per_block = -(-threads_per_block // spec.warp_size)
    limits = {"warps": spec.max_warps_per_sm // warps_per_block, "blocks per SM": spec.max_blocks_per_sm}

    if registers_per_thread > spec.max_regs_per_thread:
        limits["registers"] = 0
    elif registers_per_thread > 0:
        regs_per_warp = _round_up(registers_per_thread * spec.warp_size, spec.reg_alloc_unit)
        if regs_per_warp * warps_per_block > spec.max_regs_per_block:
            limits["registers"] = 0
        else:
            warps = spec.regs_per_sm // regs_per_warp
            warps -= warps % WARP_ALLOCATION_GRANULARITY
            limits["registers"] = warps // warps_per_block

    if smem_per_block > spec.smem_per_block_optin:
        limits["shared memory"] = 0
    else:
        allocated = _round_up(smem_per_block + spec.smem_reserved_per_block, spec.smem_alloc_unit)
        if allocated:
            limits["shared memory"] = spec.smem_per_sm // allocated

    blocks = min(limits.values())
    limiter = next(name for name in _LIMIT_ORDER if limits.get(name) == blocks)
    warps = blocks * warps_per_block
    return Occupancy(blocks, warps, warps / spec.max_warps_per_sm, limiter, limits)
