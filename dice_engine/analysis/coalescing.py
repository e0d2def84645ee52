"""`coalescing`: global loads and stores whose addresses across a warp touch more 32-byte sectors
than the bytes they move need.

The trace gives each access's element index per thread, so the model is exact for the modeled
block: bytes = index × element size (+ field offset), sectors = distinct 32-byte segments per
warp. An access is flagged when it needs at least twice the ideal number of sectors, in runs
shorter than half a sector, and the other accesses to the same array in the same loop iteration
do not fill the gaps (`a[2*i]` next to `a[2*i+1]` is fine: the second load hits the sectors the
first one brought in). Runs of 16 bytes or more (tensor-core fragment stores: each row segment
half a sector) are how such code is meant to look and are not flagged.
"""
from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from .rule import Context, Rule
from .findings import Finding
from .report import finding
from .trace import Access, Trace
from .syntax import FileFacts, Source, text

SECTOR = 32
WASTE_RATIO = 2.0
MIN_SECTORS = 4          # fewer is a (near) broadcast, cheap whatever its pattern

Range = tuple[int, int]  # the bytes [begin, end) one lane moves


def coalescing_findings(src: Source, trace: Trace, facts: FileFacts) -> list[Finding]:
    by_node: dict[int, list[Access]] = defaultdict(list)
    for a in trace.accesses:
        if a.mem.space == "global" and a.kind != "atomic" and a.addr is not None:
            by_node[a.node.id].append(a)
    neighbours: dict[tuple, list[Access]] | None = None       # built for the first suspect only
    out: list[Finding] = []
    for accesses in by_node.values():
        first = accesses[0]
        if all(a.unit_stride() for a in accesses) or _geometry(first, facts) is None:
            continue
        worst = _footprint(accesses, facts)
        if worst is None:
            continue
        neighbours = neighbours or _neighbours(by_node)
        group = _companions(accesses, neighbours)
        if len(group) > len(accesses) and _footprint(group, facts) is None:
            continue
        out.append(_finding(src, first, facts, *worst))
    return _one_per_line(out)


def _one_per_line(findings: list[Finding]) -> list[Finding]:
    """One finding per code and line: a load and a store of one statement (`out[i] = in[i]`)
    share the cause and the fix, so they are one finding covering both."""
    kept: dict[tuple[str, int], Finding] = {}
    for f in findings:
        same = kept.get((f.code, f.line))
        if same is None:
            kept[(f.code, f.line)] = f
            continue
        same.column, same.end_column = min(same.column, f.column), max(same.end_column, f.end_column)
        same.end_line = max(same.end_line, f.end_line)
        other = f.data.get("array")
        if other and other != same.data.get("array"):
            same.message += f" `{other}` on this line is accessed the same way."
    return list(kept.values())


def _neighbours(by_node: dict[int, list[Access]]) -> dict[tuple, list[Access]]:
    """Accesses by array, direction and loop iteration: those share the sectors they fetch."""
    out: dict[tuple, list[Access]] = defaultdict(list)
    for accesses in by_node.values():
        for a in accesses:
            out[(a.mem.name, a.kind, a.iterations)].append(a)
    return out


def _companions(accesses: list[Access], neighbours: dict[tuple, list[Access]]) -> list[Access]:
    """The accesses, plus those to the same array in the same loop iteration at a fixed offset
    from them (`a[2*i]` and `a[2*i+1]`; `x[f + 0]` … `x[f + 3]`): together they use the
    sectors one of them alone would waste."""
    out = list(accesses)
    for a in accesses:
        for b in neighbours[(a.mem.name, a.kind, a.iterations)]:
            if b.node.id != a.node.id and b.addr.shape == a.addr.shape:
                delta = b.addr - a.addr
                if np.all(delta == delta[0]):
                    out.append(b)
    return out


def _geometry(a: Access, facts: FileFacts) -> tuple[int, int] | None:
    elem = facts.sizeof(a.mem.elem)
    if elem is None:
        return None
    return elem, a.access_size or elem


def _footprint(accesses: list[Access], facts: FileFacts):
    """(ratio, stride, sectors, ideal) when the accesses, taken together per warp, waste memory
    traffic: at least twice the sectors their bytes need, spread in runs shorter than half a
    sector. Together means every execution (loop iterations included): a thread walking its own
    small chunk (`for k < 4: x[4 * tid + k]`) fills the sectors it fetched. None when fine.

    One warp is 32 numbers per execution: plain Python ints handle those for a third of the
    cost of numpy calls."""
    worst = None
    for w in range(min(2, accesses[0].addr.size // 32)):
        lanes = slice(32 * w, 32 * w + 32)
        executions: list[list[Range]] = []
        stride = None
        for a in accesses:
            if not a.mask[lanes].any():
                continue
            elem, size = _geometry(a, facts)
            # the address pattern of the whole warp: lanes switched off by a branch
            # (`if (tid % 2 == 0)`) are divergence, not an addressing problem
            index = a.addr[lanes].tolist()
            executions.append([(i * elem + a.field_offset, i * elem + a.field_offset + size)
                               for i in index])
            if stride is None:
                steps = {after - before for before, after in zip(index, index[1:])}
                stride = steps.pop() if len(steps) == 1 else None
        if not executions:
            continue
        sectors, ideal, moved, runs = _sector_use([r for ranges in executions for r in ranges])
        ratio = sectors / ideal
        if ratio >= WASTE_RATIO and sectors >= MIN_SECTORS and moved / runs < SECTOR / 2 \
                and (worst is None or ratio > worst[0]) \
                and (len(executions) == 1 or any(_wasteful(ranges) for ranges in executions)):
            worst = (ratio, stride, sectors, ideal)
    return worst


def _wasteful(ranges: list[Range]) -> bool:
    """One execution alone needs at least twice its sectors. Executions far apart (a broadcast
    load unrolled over grid strides) each fetch their own sector: that is no waste, however
    many sectors they touch together. (A lone execution is its warp's total: judged already.)"""
    sectors, ideal, _, _ = _sector_use(ranges)
    return sectors >= MIN_SECTORS and sectors >= WASTE_RATIO * ideal


def _sector_use(ranges: list[Range]) -> tuple[int, int, int, int]:
    """For the byte ranges: the 32-byte sectors touched, the sectors their bytes would fill if
    packed, the bytes covered and the contiguous runs they form."""
    sectors = len({begin // SECTOR for begin, _ in ranges} | {(end - 1) // SECTOR for _, end in ranges})
    moved, runs = _merged(ranges)
    return sectors, max(1, -(-moved // SECTOR)), moved, runs


def _merged(ranges: list[Range]) -> tuple[int, int]:
    """Bytes covered by the (non-empty list of) byte ranges and the number of contiguous runs
    they form (touching ranges join one run)."""
    ordered = sorted(ranges)
    run_begin, reach = ordered[0]               # the run so far and where it ends
    moved, runs = 0, 1
    for begin, end in ordered:
        if begin > reach:
            moved += reach - run_begin
            run_begin, reach, runs = begin, end, runs + 1
        elif end > reach:
            reach = end
    return moved + reach - run_begin, runs


def _finding(src: Source, a: Access, facts: FileFacts, ratio: float, stride: int | None,
             sectors: int, ideal: int) -> Finding:
    name = a.mem.name
    figures = (f"a warp touches {sectors} 32-byte sectors where {ideal} would carry the same data "
               f"({ratio:.0f}x the memory traffic)")
    data = {"sectors": sectors, "ideal_sectors": ideal, "stride": stride, "array": name}
    if a.access_size is not None and a.access_size < (facts.sizeof(a.mem.elem) or 0):
        field = re.split(r"\.|->", text(a.node))[-1]
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


def _check(ctx: Context) -> list[Finding]:
    return coalescing_findings(ctx.src, ctx.trace, ctx.facts)


RULE = Rule("coalescing", ('DICE-C001', 'DICE-C002', 'DICE-C003'), _check, needs_trace=True)
