"""`coalescing`: global loads and stores whose addresses across a warp touch more 32-byte sectors
than the bytes they move need.

The trace gives each access's element index per thread, so the model is exact for the modeled
block: bytes = index × element size (+ field offset), sectors = distinct 32-byte segments per
warp. An access is flagged when it needs at least twice the ideal number of sectors and the other
accesses of the same statement block to the same array do not fill the gaps (`a[2*i]` next to
`a[2*i+1]` is fine: the second load hits the sectors the first one brought in).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from .findings import Finding
from .report import finding
from .simt import Access, Trace
from .syntax import FileFacts, Source, text

SECTOR = 32
WASTE_RATIO = 2.0


def coalescing_findings(src: Source, trace: Trace, facts: FileFacts) -> list[Finding]:
    by_node: dict[int, list[Access]] = defaultdict(list)
    for a in trace.accesses:
        if a.mem.space == "global" and a.kind != "atomic" and a.addr is not None:
            by_node[a.node.id].append(a)
    neighbours: dict[tuple[str, str, int], list[Access]] = defaultdict(list)
    for accesses in by_node.values():
        a = accesses[0]
        neighbours[(a.mem.name, a.kind, a.block_id)].append(a)
    out: list[Finding] = []
    for accesses in by_node.values():
        worst = _worst(accesses, facts)
        if worst is None:
            continue
        access, ratio, stride, sectors, ideal = worst
        first = accesses[0]
        group = neighbours[(first.mem.name, first.kind, first.block_id)]
        if len(group) > 1 and _union_ratio(group, facts) < WASTE_RATIO:
            continue
        out.append(_finding(src, access, facts, ratio, stride, sectors, ideal))
    return out


def _geometry(a: Access, facts: FileFacts) -> tuple[int, int] | None:
    elem = facts.sizeof(a.mem.elem)
    if elem is None:
        return None
    return elem, a.access_size or elem


def _warp_sectors(start: np.ndarray, size: int) -> tuple[int, int]:
    # 32 lanes: Python sets beat np.unique's per-call overhead
    first = (start // SECTOR).tolist()
    last = ((start + size - 1) // SECTOR).tolist()
    sectors = len(set(first) | set(last))
    ideal = max(1, -(-len(set(start.tolist())) * size // SECTOR))
    return sectors, ideal


def _worst(accesses: list[Access], facts: FileFacts):
    best = None
    for a in accesses:
        geo = _geometry(a, facts)
        if geo is None:
            continue
        elem, size = geo
        byte_addr = a.addr * elem + a.field_offset
        for w in range(min(2, a.addr.size // 32)):
            lanes = slice(32 * w, 32 * w + 32)
            if not a.mask[lanes].any():
                continue
            # the address pattern of the whole warp: lanes switched off by a branch
            # (`if (tid % 2 == 0)`) are divergence, not an addressing problem
            sectors, ideal = _warp_sectors(byte_addr[lanes], size)
            ratio = sectors / ideal
            if ratio >= WASTE_RATIO and (best is None or ratio > best[1]):
                idx = a.addr[lanes]
                steps = np.diff(idx)
                stride = int(steps[0]) if steps.size and np.all(steps == steps[0]) else None
                best = (a, ratio, stride, sectors, ideal)
    return best


def _union_ratio(group: list[Access], facts: FileFacts) -> float:
    worst = 0.0
    geo = [_geometry(a, facts) for a in group]
    if any(g is None for g in geo):
        return worst
    for w in range(min(2, group[0].addr.size // 32)):
        lanes = slice(32 * w, 32 * w + 32)
        starts, sizes = [], []
        for a, (elem, size) in zip(group, geo):
            if a.mask[lanes].any():
                starts.append(a.addr[lanes] * elem + a.field_offset)
                sizes.append(np.full(32, size))
        if not starts:
            continue
        start, size = np.concatenate(starts), np.concatenate(sizes)
        sectors = len(set((start // SECTOR).tolist()) | set(((start + size - 1) // SECTOR).tolist()))
        moved = len(set(start.tolist())) * int(size.max())
        worst = max(worst, sectors / max(1, -(-moved // SECTOR)))
    return worst


def _finding(src: Source, a: Access, facts: FileFacts, ratio: float, stride: int | None,
             sectors: int, ideal: int) -> Finding:
    name = a.mem.name
    figures = (f"a warp touches {sectors} 32-byte sectors where {ideal} would carry the same data "
               f"({ratio:.0f}x the memory traffic)")
    data = {"sectors": sectors, "ideal_sectors": ideal, "stride": stride, "array": name}
    if a.access_size is not None and a.access_size < (facts.sizeof(a.mem.elem) or 0):
        field = text(a.node).rsplit(".", 1)[-1]
        code = "DICE-C002"
        msg = (f"Array-of-structs access: each thread reads field `{field}` of a "
               f"{facts.sizeof(a.mem.elem)}-byte `{a.mem.elem}`, so {figures}. Store the field in "
               "its own array (struct of arrays), or load whole structs with vector loads and "
               "use every field.")
    elif stride is not None and abs(stride) >= 32:
        code = "DICE-C003"
        apart = f"{abs(stride)} elements" if a.exact else "a run-time number of elements (a row length)"
        msg = (f"Consecutive threads (threadIdx.x) access `{name}` {apart} apart: "
               f"threadIdx.x is not the fastest-varying index, so {figures}. Make threadIdx.x "
               "index the contiguous (last) dimension, or stage the tile through shared memory.")
    else:
        code = "DICE-C001"
        step = f"{abs(stride)} elements apart" if stride is not None else "at scattered addresses"
        msg = (f"Consecutive threads access `{name}` {step}: {figures}. Map consecutive "
               "threads to consecutive elements (or load contiguous vectors and select in "
               "registers).")
    return finding(src, a.node, code, msg, data=data)
