"""Occupancy against hand-computed values of NVIDIA's CUDA Occupancy Calculator.

Each case states the arithmetic (sm_80: 64 warps and 32 blocks per SM, 65536 registers
allocated per warp in units of 256 with a warp granularity of 4, 164 KiB of shared memory per
SM with 1 KiB reserved per block, 128-byte units; sm_86: 48 warps, 16 blocks)."""
from __future__ import annotations

import pytest

from dice_engine.arch import occupancy


@pytest.mark.parametrize("arch, threads, regs, smem, blocks, fraction, limiter", [
    # 8 warps/block; 32 regs → 1024/warp → 64 warps fit → 8 blocks; the warp limit also allows 8
    ("sm_80", 256, 32, 0, 8, 1.0, "warps"),
    # 64 regs → 2048/warp → 32 warps → 4 blocks of 8 warps → 32/64
    ("sm_80", 256, 64, 0, 4, 0.5, "registers"),
    # 40 regs → 1280/warp → 51 warps, rounded down to 48 by the granularity → 16 blocks of 3 warps
    ("sm_80", 96, 40, 0, 16, 0.75, "registers"),
    # 48 KiB + 1 KiB reserved = 50176 B/block → 167936 // 50176 = 3 blocks of 4 warps → 12/64
    ("sm_80", 128, 16, 48 * 1024, 3, 0.1875, "shared memory"),
    # one-warp blocks stop at 32 blocks per SM → 32/64
    ("sm_80", 32, 16, 0, 32, 0.5, "blocks per SM"),
    # 1024 threads × 64 regs is exactly the 64K register file → 1 block of 32 warps
    ("sm_80", 1024, 64, 0, 1, 0.5, "registers"),
    # 65 regs → 2304/warp × 32 warps = 73728 > 65536: the block cannot launch
    ("sm_80", 1024, 65, 0, 0, 0.0, "registers"),
    # above the per-block opt-in maximum (163 KiB)
    ("sm_80", 128, 32, 170 * 1024, 0, 0.0, "shared memory"),
    ("sm_80", 2048, 32, 0, 0, 0.0, "block size"),
    ("sm_80", 128, 256, 0, 0, 0.0, "registers"),
    # sm_86: 48 warps per SM → 6 blocks of 8 warps, full occupancy
    ("sm_86", 256, 32, 0, 6, 1.0, "warps"),
])
def test_known_occupancies(arch, threads, regs, smem, blocks, fraction, limiter):
    occ = occupancy(arch, threads, regs, smem)
    assert (occ.blocks_per_sm, occ.fraction, occ.limiter) == (blocks, pytest.approx(fraction), limiter)
    assert occ.warps_per_sm == blocks * -(-threads // 32)


def test_unknown_register_count_does_not_limit():
    occ = occupancy("a100", 256, 0, 0)
    assert occ.fraction == 1.0 and "registers" not in occ.limits
