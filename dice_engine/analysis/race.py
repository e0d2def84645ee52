"""`race`: two threads touching one shared-memory element in the same barrier interval, at least
one of them writing.

Accesses come from the SIMT trace with exact per-thread element indices, so "my element" versus
"another thread's element" is decided by the indices themselves, guards included (`if (tid < s)`).
Barrier intervals are the trace's epochs; loops are unrolled, so the writes of one iteration
meet the reads of the next when no barrier separates them. `__syncwarp` separates accesses of
lanes of the same warp only.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from .rule import Context, Rule
from .findings import Finding
from .report import finding, line_of
from .trace import LANE, UNIFORM, Access, Trace
from .syntax import FIELD, Source, text


def race_findings(src: Source, trace: Trace) -> list[Finding]:
    groups: dict[tuple[str, int], list[Access]] = defaultdict(list)
    atomics: dict[tuple[str, int], list[Access]] = defaultdict(list)
    for a in trace.accesses:
        if a.mem.space != "shared":
            continue
        if a.kind == "atomic":
            atomics[(a.mem.name, a.epoch)].append(a)
        elif a.addr is not None:
            groups[(a.mem.name, a.epoch)].append(a)
    seen: set[tuple[str, int]] = set()
    out: list[Finding] = []
    threads = _Threads(trace)
    for (name, epoch), updates in atomics.items():
        # a compare-and-swap loop reads the element plainly on purpose: the swap checks the read
        updates = [u for u in updates if not _callee(u.node).startswith("atomicCAS")]
        plain = groups.get((name, epoch), ())
        for a in _after_atomics(threads, updates, plain):
            if ("atomic", a.node.id) not in seen:
                seen.add(("atomic", a.node.id))
                out.append(_atomic_finding(src, updates[0], a))
        for u, w in _atomics_after_writes(threads, updates, plain):
            if ("atomic", u.node.id) not in seen:
                seen.add(("atomic", u.node.id))
                out.append(_atomic_after_write_finding(src, w, u))
    for node_id, a in _scattered_updates(trace).items():
        seen.add(("DICE-R003", node_id))
        out.append(finding(src, a.node, "DICE-R003",
                           f"Read-modify-write of `{a.mem.name}` at a data-dependent index: two threads "
                           "with the same index both read the old value and one update is lost. Use "
                           "`atomicAdd` (or another atomic) for scattered updates.",
                           data={"array": a.mem.name}))
    for accesses in groups.values():
        if not any(a.kind == "w" for a in accesses):
            continue
        for j, later in enumerate(accesses):
            for earlier in accesses[: j + 1]:
                code = _hazard(threads, earlier, later)
                if code is None or (code, later.node.id) in seen:
                    continue
                seen.add((code, later.node.id))
                out.append(_finding(src, code, earlier, later))
    return out


def _scattered_updates(trace: Trace) -> dict[int, Access]:
    """Shared `s[idx] += …` where idx comes from data: collisions between threads are likely."""
    reads: set[int] = set()
    out: dict[int, Access] = {}
    for a in trace.accesses:
        if a.mem.space != "shared" or a.addr is not None or a.addr_level != LANE:
            continue
        if a.kind == "r":
            reads.add(a.node.id)
        elif a.kind == "w" and a.node.id in reads:
            out.setdefault(a.node.id, a)
    return out


def _after_atomics(threads: _Threads, updates: list[Access], accesses) -> list[Access]:
    """The plain accesses of one barrier interval that follow an atomic update of the same
    shared array and may touch an element another thread updates: atomics order the updates
    among themselves, not a later plain read (a histogram merged before the barrier)."""
    out = []
    for a in accesses:
        for u in updates:
            if u.seq < a.seq and (u.addr is None or threads.conflict(u, a)):
                out.append(a)
                break
    return out


def _atomics_after_writes(threads: _Threads, updates: list[Access], accesses) -> list[tuple[Access, Access]]:
    """(atomic, plain write) pairs of one barrier interval where the atomic follows another
    thread's plain write of its element (bins cleared, then counted, with no barrier between)."""
    out = []
    for u in updates:
        for w in accesses:
            if w.kind == "w" and w.seq < u.seq and (u.addr is None or threads.conflict(w, u)):
                out.append((u, w))
                break
    return out


def _callee(node) -> str:
    """The name of the call an argument node belongs to ("" when it is not an argument)."""
    call = node.parent.parent if node.parent is not None else None
    if call is None or call.type != "call_expression":
        return ""
    return text(call.child_by_field_id(FIELD.function)).split("::")[-1]


def _hazard(threads: _Threads, earlier: Access, later: Access) -> str | None:
    if earlier.kind == "r" and later.kind == "r":
        return None
    if _across_truncated_tree(threads.trace, earlier, later):
        return None
    if earlier is later:
        # one write executed by many threads: only a race when they store different values
        if later.value_level == UNIFORM or not threads.conflict(earlier, later):
            return None
        return "DICE-R003"
    if not threads.conflict(earlier, later):
        return None
    crosses_tree = any(a != b and a.tree for a, b in zip(earlier.iterations, later.iterations))
    if crosses_tree:
        return "DICE-R004"
    if earlier.kind == "w" and later.kind == "w":
        return "DICE-R003"
    return "DICE-R001" if earlier.kind == "w" else "DICE-R002"


def _across_truncated_tree(trace: Trace, earlier: Access, later: Access) -> bool:
    """One access inside a tree loop the model stopped early and the other after it: which
    threads the real last level runs is unknown, so nothing is claimed between the two."""
    if not trace.truncated:
        return False
    inside = {s.loop for s in earlier.iterations} ^ {s.loop for s in later.iterations}
    return bool(inside & trace.truncated)


class _Threads:
    """Which threads touch which elements, per thread pattern: an access's element indices and
    mask. Many executions share a pattern (`s[tid]` in every loop iteration, the read and the
    write of `s[tid] += …`), so each pattern is sorted once and each pair of patterns compared
    once. The thread key is the thread id, or the warp id when a __syncwarp separates the two
    accesses (lanes of one warp are then ordered)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._pattern_ids: dict[tuple[str, bytes, bytes], int] = {}
        self._pattern_of: dict[int, int] = {}          # id(access) -> its pattern
        self._sorted: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]] = {}
        self._conflicts: dict[tuple[int, int, bool], bool] = {}

    def pattern(self, a: Access) -> int:
        got = self._pattern_of.get(id(a))
        if got is None:
            key = (a.addr.dtype.str, a.addr.tobytes(), a.mask.tobytes())
            got = self._pattern_of[id(a)] = self._pattern_ids.setdefault(key, len(self._pattern_ids))
        return got

    def conflict(self, a: Access, b: Access) -> bool:
        """Some thread of `a` and a *different* thread of `b` touch the same element (threads of
        one warp only count when no __syncwarp lies between)."""
        key = (self.pattern(a), self.pattern(b), a.warp_epoch != b.warp_epoch)
        got = self._conflicts.get(key)
        if got is None:
            got = self._conflicts[key] = self._compare(a, b, *key)
        return got

    def _compare(self, a: Access, b: Access, pattern_a: int, pattern_b: int, by_warp: bool) -> bool:
        addr_a, key_a = self._sorted_pairs(a, pattern_a, by_warp)
        if pattern_a == pattern_b:
            # b's threads are a's: a conflict is an element with two keys, neighbours once sorted
            return bool(np.any((addr_a[1:] == addr_a[:-1]) & (key_a[1:] != key_a[:-1])))
        addr_b, key_b = self._sorted_pairs(b, pattern_b, by_warp)
        if addr_a.size == 0 or addr_b.size == 0 or addr_a[-1] < addr_b[0] or addr_b[-1] < addr_a[0]:
            return False            # no element in common (half the pairs: disjoint index ranges)
        lo = addr_a.searchsorted(addr_b, "left")
        hi = addr_a.searchsorted(addr_b, "right")
        hit = hi > lo
        if not hit.any():
            return False
        first, last = key_a[lo[hit]], key_a[hi[hit] - 1]
        mine = key_b[hit]
        return bool(np.any((first != mine) | (last != mine)))

    def _sorted_pairs(self, a: Access, pattern: int, by_warp: bool) -> tuple[np.ndarray, np.ndarray]:
        """(element, thread key) of the threads performing `a`, sorted by element, then key."""
        got = self._sorted.get((pattern, by_warp))
        if got is None:
            addr = a.addr[a.mask]
            key = (self.trace.warp_of if by_warp else self.trace.thread_ids)[a.mask]
            order = np.lexsort((key, addr))
            got = self._sorted[(pattern, by_warp)] = (addr[order], key[order])
        return got


def _atomic_finding(src: Source, update: Access, later: Access) -> Finding:
    name = later.mem.name
    other = f"`{text(update.node)}` (line {line_of(update.node)})"
    if later.kind == "r":
        code, what = "DICE-R001", "reads"
    else:
        code, what = "DICE-R003", "overwrites"
    msg = (f"This {what} `{name}` while other threads may still update the same element with the "
           f"atomic {other}: no `__syncthreads()` lies between, so it can miss their updates. Put a "
           "barrier between the atomic updates and the plain accesses.")
    return finding(src, later.node, code, msg, data={"array": name})


def _atomic_after_write_finding(src: Source, write: Access, update: Access) -> Finding:
    name = update.mem.name
    msg = (f"This atomic update of `{name}` can run before another thread's plain write "
           f"`{text(write.node)}` (line {line_of(write.node)}) of the same element: no `__syncthreads()` "
           "lies between, so the write can land after the update and erase it. Put a barrier after "
           "the initialization.")
    return finding(src, update.node, "DICE-R003", msg, data={"array": name})


def _finding(src: Source, code: str, earlier: Access, later: Access) -> Finding:
    name = later.mem.name
    other = f"`{text(earlier.node)}` (line {line_of(earlier.node)})"
    if code == "DICE-R001":
        msg = (f"Thread reads `{name}` here while another thread writes the same element in {other} "
               "with no `__syncthreads()` between: the read may see the old or the new value "
               "depending on scheduling. Put a barrier between the write and the read.")
    elif code == "DICE-R002":
        where = "in the previous loop iteration " if earlier.iterations != later.iterations else ""
        msg = (f"This write to `{name}` can overwrite an element another thread still reads {where}"
               f"in {other}: no barrier separates them, so that thread may read the new value. Add a "
               "`__syncthreads()` after the last read (for tiled loops: at the end of the loop body).")
    elif code == "DICE-R003":
        msg = (f"Several threads write the same element of `{name}` without a barrier between them "
               f"(with {other}): which value survives depends on scheduling. Let one thread write "
               "(e.g. `if (threadIdx.x == 0)`), index by the thread, or use an atomic.")
    else:
        msg = (f"Reduction step on `{name}` without a barrier: a thread reads partial sums that other "
               f"threads are still writing from the previous step ({other}). Put `__syncthreads()` "
               "in the loop after each step (`__syncwarp()` for steps inside one warp).")
    return finding(src, later.node, code, msg, data={"array": name})


def _check(ctx: Context) -> list[Finding]:
    return race_findings(ctx.src, ctx.trace)


RULE = Rule("race", ('DICE-R001', 'DICE-R002', 'DICE-R003', 'DICE-R004'), _check, needs_trace=True)
