"""Which design tokens the feedback on a candidate blames, and which way they should move.

Every token declares its roles (sketches/base.py `Role`); the feedback picks tokens by role:
spills and register-limited occupancy blame the block shape and each thread's work, shared
memory the tiles and pipeline buffers, too small a block the block shape, an under-filled grid
the work per block (smaller) and the splits of a reduction axis (more), a compile error the whole
point.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sketches.base import DesignSpace, Role
from .cost import CostEstimate

# what a thread keeps in registers (and, at a fixed block shape, the work of a block)
_PER_THREAD = {Role.TILE, Role.WORK, Role.VECTOR, Role.UNROLL}
_SHARED = _PER_THREAD | {Role.PIPELINE, Role.SMEM}


@dataclass(frozen=True)
class Blame:
    tokens: dict[str, int]  # token → preferred direction (-1 smaller, +1 larger, 0 either)
    reason: str


def _with_roles(space: DesignSpace, roles: set[Role], direction: int) -> dict[str, int]:
    return {t.name: direction for t in space.tokens if roles.intersection(t.roles) and len(t.choices) > 1}


def blame_everything(space: DesignSpace, reason: str) -> Blame:
    return Blame({t.name: 0 for t in space.tokens if len(t.choices) > 1}, reason)


def blame_estimate(space: DesignSpace, est: CostEstimate, sms: int) -> Blame | None:
    """Tokens blamed by the compiled kernel's resources and launch shape; None if nothing stands out."""
    registers = {**_with_roles(space, {Role.THREADS}, 0), **_with_roles(space, _PER_THREAD, -1)}
    if est.spill_bytes:
        return Blame(registers, "register spills")
    occ = est.occupancy
    if occ is not None and occ.fraction < 0.5:
        if occ.limiter == "registers":
            tokens = registers
        elif occ.limiter == "shared memory":
            tokens = _with_roles(space, _SHARED, -1)
        else:  # block size, blocks per SM or warps: the block shape itself
            tokens = _with_roles(space, {Role.THREADS}, +1)
        if tokens:
            return Blame(tokens, f"occupancy limited by {occ.limiter}")
    if est.blocks < sms:
        tokens = {**_with_roles(space, _PER_THREAD, -1), **_with_roles(space, {Role.SPLIT}, +1)}
        if tokens:
            return Blame(tokens, "grid smaller than the GPU")
    return None
