"""Which design tokens the feedback on a candidate blames, and which way they should move.

Tokens are matched to roles by name (sketches are free to name their tokens; the patterns cover
the usual spellings): spills blame the tiling and thread tokens, low occupancy the tokens of the
limiting resource, an under-filled grid the tiling, a compile error the whole point.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..sketches.base import DesignSpace, Token
from .cost import CostEstimate

_ROLES = {
    "threads": re.compile(r"^(threads|warps|group|block_[xyz]|block_rows|block_size|wpb)$"
                          r"|^(threads|warps)_per_block$|^warp_[mn]$"),
    # per-thread work sets the register footprint; `warp_m` is both a warp count and a tile
    "tiling": re.compile(r"tile|^block_[mnk]$|^(thread|warp)_[mnk]$|per_thread|items|outputs|unroll|vec"
                         r"|split|chunk"),
    "smem": re.compile(r"smem|shared|stage|buffer|pad|tile|cache"),
}


@dataclass(frozen=True)
class Blame:
    tokens: dict[str, int]   # token → preferred direction (-1 smaller, +1 larger, 0 either)
    reason: str


def roles(token: Token) -> set[str]:
    return {role for role, pattern in _ROLES.items() if pattern.search(token.name.lower())}


def _with_role(space: DesignSpace, role: str, direction: int) -> dict[str, int]:
    return {t.name: direction for t in space.tokens if role in roles(t) and len(t.choices) > 1}


def blame_everything(space: DesignSpace, reason: str) -> Blame:
    return Blame({t.name: 0 for t in space.tokens if len(t.choices) > 1}, reason)


def blame_estimate(space: DesignSpace, est: CostEstimate, sms: int) -> Blame | None:
    """Tokens blamed by the compiled kernel's resources and launch shape; None if nothing stands out."""
    if est.spill_bytes:
        tokens = {**_with_role(space, "threads", 0), **_with_role(space, "tiling", -1)}
        return Blame(tokens, "register spills")
    occ = est.occupancy
    if occ is not None and occ.fraction < 0.5:
        if occ.limiter == "registers":
            tokens = {**_with_role(space, "threads", 0), **_with_role(space, "tiling", -1)}
        elif occ.limiter == "shared memory":
            tokens = {**_with_role(space, "tiling", -1), **_with_role(space, "smem", -1)}
        else:   # block size, blocks per SM or warps: the block shape itself
            tokens = _with_role(space, "threads", +1)
        if tokens:
            return Blame(tokens, f"occupancy limited by {occ.limiter}")
    if est.blocks < sms and (tokens := _with_role(space, "tiling", -1)):
        return Blame(tokens, "grid smaller than the GPU")
    return None
