"""What the SIMT interpreter records for the memory and sync analyses: memory objects,
accesses with per-thread element indices, divergence events, and the modeled block.

Levels say how far a value varies: UNIFORM (same in every thread of the block), WARP (same
within each warp), LANE (varies within a warp).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from tree_sitter import Node

UNIFORM, WARP, LANE = 0, 1, 2

Array = np.ndarray
_LANES = np.arange(32)


@dataclass(frozen=True)
class Memory:
    """A memory object an index walks: a global pointer parameter, a __shared__ array, a local array."""
    name: str
    space: str                          # "global" | "shared" | "local"
    elem: str                           # element type name
    dims: tuple[int, ...] | None        # declared extents (shared/local arrays), None when unknown
    decl: Node | None = None            # the declaration (for padding fixes)
    scalar: bool = False                # a __shared__ scalar, accessed by its name
    rank: int = 1                       # declared dimensions (known even when `dims` is not)


class LoopStep(NamedTuple):
    """Where an access sits in one enclosing loop."""
    loop: int                           # loop id (per entry)
    iteration: int
    tree: bool                          # the loop variable halves or doubles (a reduction tree)
    trip: int | None                    # constant trip count, when the loop is `v = a; v < b; ++v`


@dataclass(slots=True)
class Access:
    mem: Memory
    kind: str                           # "r" | "w" | "atomic"
    node: Node                          # the subscript / dereference expression
    addr: Array | None                  # linear element index per thread, None when data-dependent
    indices: tuple[Array, ...] | None   # per-dimension indices (shared arrays with dims)
    mask: Array                         # threads performing the access
    epoch: int                          # block barriers executed before it
    warp_epoch: int                     # warp barriers (and block barriers) executed before it
    seq: int
    iterations: tuple[LoopStep, ...]    # enclosing loops, outermost first
    field_offset: int = 0               # bytes, for struct field accesses
    access_size: int | None = None      # bytes actually read/written (the field), None: element
    value_level: int = UNIFORM          # level of the value written
    exact: bool = False                 # the address depends only on thread ids and literals
    addr_level: int = UNIFORM           # level of the address (LANE: threads may differ)

    def unit_stride(self) -> bool:
        """In every warp, lanes touch consecutive elements or all the same one (the common case,
        fine for both coalescing and banks, checked cheaply before the full models)."""
        addr = self.addr
        if addr is None or addr.size % 32 or self.access_size is not None:
            return False                # a struct field: consecutive structs are not consecutive bytes
        step = int(addr[1] - addr[0]) if addr.size else 0      # lane 0 to 1 tells which pattern
        if step not in (0, 1):
            return False
        rows = addr.reshape(-1, 32)
        expected = rows[:, :1] + _LANES if step else rows[:, :1]
        return not np.count_nonzero(rows - expected)


@dataclass
class SyncEvent:
    node: Node
    code: str
    reason: Node | None                 # the condition / exit / loop responsible
    data: dict = field(default_factory=dict)


@dataclass
class Trace:
    accesses: list[Access] = field(default_factory=list)
    sync: list[SyncEvent] = field(default_factory=list)
    threads: int = 0
    warp_of: Array | None = None
    thread_ids: Array | None = None
    truncated: set[int] = field(default_factory=set)   # tree loops stopped before their last level


@dataclass
class BlockModel:
    dims: tuple[int, int, int]
    known: bool                         # from a launch site or __launch_bounds__

    @property
    def threads(self) -> int:
        return self.dims[0] * self.dims[1] * self.dims[2]
