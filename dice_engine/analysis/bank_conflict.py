"""`bank-conflict`: shared-memory accesses whose addresses across a warp hit one of the 32 banks
(4 bytes wide) with more than one distinct word. Same-word accesses are broadcasts, not
conflicts. 8- and 16-byte accesses are served in half- and quarter-warp phases.

For a 2-D tile `[R][C]` whose row is a multiple of 128 bytes, the fix pads it to `[R][C+1]`, but
only when re-evaluating every access of that tile with the padded row shows the conflict gone
and no access made worse.
"""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

import numpy as np

from .rule import Context, Rule
from .findings import Finding, Fix
from .report import finding, replace
from .trace import Access, Trace
from .syntax import FIELD, FileFacts, Source, int_literal, operator, text, trip_count, walk

BANKS = 32


def bank_conflict_findings(src: Source, trace: Trace, facts: FileFacts) -> list[Finding]:
    by_node: dict[int, list[Access]] = defaultdict(list)
    by_mem: dict[str, list[Access]] = defaultdict(list)
    by_mem_node: dict[str, dict[int, list[Access]]] = defaultdict(lambda: defaultdict(list))
    touching: dict[str, list[Access]] = defaultdict(list)   # atomics and unknown addresses too
    for a in trace.accesses:
        if a.mem.space == "shared":
            touching[a.mem.name].append(a)
            if a.addr is not None and a.kind != "atomic":
                by_node[a.node.id].append(a)
                by_mem[a.mem.name].append(a)
                by_mem_node[a.mem.name][a.node.id].append(a)
    degrees = _Degrees()
    spellings: dict[int, tuple[tuple[str, ...], int | None]] = {}    # node id → `_spelled_index`
    out: list[Finding] = []
    for accesses in by_node.values():
        elem = facts.sizeof(accesses[0].mem.elem)
        if elem is None:
            continue
        irregular = {id(a) for a in accesses if not a.unit_stride()}
        if elem <= 4 and not irregular:
            continue
        degree = degrees.worst(_as_issued(accesses, elem), irregular, elem)
        if degree >= 2 and elem <= 8:      # rare: only suspects pay for the neighbour search
            name = accesses[0].mem.name
            merged = _merged_neighbours(accesses, by_mem_node[name], touching[name], elem, facts,
                                        spellings)
            degree = degrees.worst(merged, irregular, elem)
        if degree < 2:
            continue
        a = accesses[0]
        fix = _padding_fix(src, a, by_mem[a.mem.name], elem, degrees)
        msg = (f"{degree}-way bank conflict on `{a.mem.name}`: lanes of one warp hit the same bank "
               f"with {degree} different words, so the access is replayed {degree} times. "
               + ("Pad the row by one element (the fix) so a column walk spreads over all banks."
                  if fix else "Change the indexing (or pad/swizzle the layout) so consecutive "
                  "lanes hit consecutive 4-byte words."))
        out.append(finding(src, a.node, "DICE-B001", msg, fix=fix,
                           data={"degree": degree, "array": a.mem.name}))
    return out


def _as_issued(accesses: list[Access], elem: int) -> list[tuple[Access, int]]:
    """The executions of one access as the hardware issues them, with their size in bytes.
    A constant loop of 2 or 4 steps over consecutive, aligned elements
    (`for (k = 0; k < 4; ++k) s[4 * tid + k] = …`) is emitted by nvcc as one 8/16-byte vector
    access, so it is judged as one."""
    out: list[tuple[Access, int]] = []
    groups: dict[tuple, list[Access]] = defaultdict(list)
    for a in accesses:
        step = a.iterations[-1] if a.iterations else None
        if step is not None and step.trip in (2, 4) and elem * step.trip in (8, 16) and not a.field_offset:
            groups[a.iterations[:-1] + ((step.loop,),)].append(a)
        else:
            out.append((a, a.access_size or elem))
    for group in groups.values():
        group.sort(key=lambda a: a.iterations[-1].iteration)
        first, trip = group[0], group[0].iterations[-1].trip
        live = first.mask
        vector = first.iterations[-1].iteration == 0 and all(
            a.iterations[-1].iteration == k and np.array_equal(a.addr[live], first.addr[live] + k)
            for k, a in enumerate(group)) and not np.any(first.addr[live] % trip)
        out += [(first, elem * trip)] if vector else [(a, a.access_size or elem) for a in group]
    return out


def _merged_neighbours(accesses: list[Access], same_array: dict[int, list[Access]], touching: list[Access],
                       elem: int, facts: FileFacts, spellings: dict[int, tuple[tuple[str, ...], int | None]]
                       ) -> list[tuple[Access, int]]:
    """The executions of one access, with the other accesses of the same array whose subscripts
    spell neighbouring elements (`i` and `i + 1`) and that nvcc issues together with it (see
    `_issued_together`): `s[2 * tid] + s[2 * tid + 1]`, or the two in consecutive statements,
    with `2 * tid` even, compile to one 8-byte access (a single LDS.64 on sm_90), four 4-byte or
    two 8-byte neighbours to one 16-byte access, and are judged as one. The execution that
    starts such an aligned run carries its size; the others are served by it and left out.
    `same_array`: the array's accesses at known addresses, by node; `touching`: all of them; `spellings`:
    the subscripts' `_spelled_index`, by node, filled as they are read (loops repeat nodes)."""
    node = accesses[0].node
    spelled, offset = _spelled_index(node)
    neighbours: list[tuple[Access, int]] = []          # (access, elements apart as written)
    for node_id, executions in same_array.items() if offset is not None else ():
        if node_id == node.id:
            continue
        got = spellings.get(node_id)
        if got is None:
            got = spellings[node_id] = _spelled_index(executions[0].node)
        b_spelled, b_offset = got
        if b_offset is not None and b_spelled == spelled:
            neighbours += [(b, b_offset - offset) for b in executions if not b.field_offset]
    out: list[tuple[Access, int]] = []
    for a in accesses:
        size = a.access_size or elem
        live = a.mask
        if a.addr is not None and not a.field_offset and np.count_nonzero(live):
            peers = [(b.addr[live], apart) for b, apart in neighbours
                     if b.kind == a.kind and b.iterations == a.iterations and b.epoch == a.epoch
                     and np.array_equal(b.mask, live) and _issued_together(a, b, touching, facts)]
            base = a.addr[live]
            for n in (4, 2):
                first = int(base[0]) % n
                if elem * n not in (8, 16) or np.any(base % n != first):
                    continue
                if all(any(apart == k and np.array_equal(p, base + k) for p, apart in peers)
                       for k in range(-first, n - first) if k):
                    size = elem * n if first == 0 else 0
                    break
        if size:
            out.append((a, size))
    return out


def _spelled_index(node) -> tuple[tuple[str, ...], int | None]:
    """A subscript as (the array and every index but the last, the last one's spelling without
    a literal `+ c`/`- c`), c): `s[2 * t + 1]` → (("s", "2*t"), 1), `p[1]` → (("p", ""), 1). Equal
    first parts mean the compiler sees the two addresses a constant apart; `i = 2 * t; s[i];
    i += 1; s[i]` is judged apart although nvcc merges it. (((), None) for a dereference.)"""
    if node.type != "subscript_expression":
        return (), None
    parts: list[str] = []
    index = node.child_by_field_id(FIELD.indices)
    if index is None or index.named_child_count != 1:
        return (), None
    index = index.named_children[0]
    while node.type == "subscript_expression":
        inner = node.child_by_field_id(FIELD.indices)
        parts.append(_spelling(inner))
        node = node.child_by_field_id(FIELD.argument)
    parts.append(_spelling(node))
    offset = 0
    while index.type == "parenthesized_expression" and index.named_child_count == 1:
        index = index.named_children[0]
    if index.type == "binary_expression" and operator(index) in ("+", "-"):
        left, right = index.child_by_field_id(FIELD.left), index.child_by_field_id(FIELD.right)
        c = int_literal(_spelling(right))
        if c is not None:
            offset, index = (c if operator(index) == "+" else -c), left
        elif operator(index) == "+" and int_literal(_spelling(left)) is not None:
            offset, index = int_literal(_spelling(left)), right
    literal = int_literal(_spelling(index))
    if literal is not None:                     # p[0] and p[1]: a base address and offsets
        offset, parts[0] = offset + literal, ""
    else:
        parts[0] = _spelling(index)
    return tuple(reversed(parts)), offset


def _spelling(node) -> str:
    return "".join(text(node).split())


# loops of up to this many constant iterations are unrolled, and do not keep two accesses on
# either side from being issued together (measured: 4-, 8- and 32-iteration loops between two loads)
_UNROLLED_TRIP = 32
_JUMPS = frozenset({"return_statement", "break_statement", "continue_statement", "goto_statement",
                    "labeled_statement", "switch_statement"})
_LOOPS = frozenset({"for_statement", "for_range_loop", "while_statement", "do_statement"})


def _issued_together(a: Access, b: Access, touching: list[Access], facts: FileFacts) -> bool:
    """Whether nvcc can issue `a` and `b` as one instruction, as measured with ptxas of CUDA 13 on
    sm_90 (SASS and Nsight Compute): yes within one statement, and across statements of one
    block with `if`s, global stores and constant loops of up to 32 iterations between them; no
    across a barrier (`epoch`), a loop with a run-time trip count, or a store or atomic on the
    array (for loads; any access, for stores), which might alias."""
    first, last = (a, b) if a.seq < b.seq else (b, a)
    if any(first.seq < x.seq < last.seq and (x.kind != "r" or a.kind != "r") for x in touching):
        return False
    sa, sb = _statement_in_block(a.node), _statement_in_block(b.node)
    if sa is None or sb is None or sa.parent != sb.parent:
        return False
    if sa == sb:
        return True
    lo, hi = sorted((sa.start_byte, sb.start_byte))
    return not any(lo < s.start_byte < hi and _splits_block(s, facts) for s in sa.parent.named_children)


def _statement_in_block(node):
    """The statement directly inside a `{ }` block that holds `node` (None if none does)."""
    while node is not None and node.parent is not None and node.parent.type != "compound_statement":
        node = node.parent
    return node if node is not None and node.parent is not None else None


def _splits_block(statement, facts: FileFacts) -> bool:
    """A jump, or a loop that nvcc keeps as a loop, anywhere in `statement`."""
    for n in walk(statement):
        if n.type in _JUMPS:
            return True
        if n.type in _LOOPS:
            trip = trip_count(n, facts.constants) if n.type == "for_statement" else None
            if trip is None or trip > _UNROLLED_TRIP:
                return True
    return False


class _Degrees:
    """Conflict degrees of one trace's executions, each distinct (addresses, mask, geometry)
    computed once: loop iterations, the neighbour search and the padding check meet the same
    addresses again (a third of the executions judged)."""

    def __init__(self) -> None:
        self._known: dict[tuple, int] = {}

    def worst(self, executions: list[tuple[Access, int]], irregular: set[int], elem: int) -> int:
        """The highest degree of the executions (as issued, with their sizes); `irregular` holds
        the ids of those not at unit stride."""
        # at unit stride, 4 bytes a lane or less hit a word each or share one: no conflict
        return max((self.of(a.addr, a, elem, size) for a, size in executions
                    if size > 4 or id(a) in irregular), default=1)

    def of(self, addr: np.ndarray, a: Access, elem: int, size: int | None = None) -> int:
        size = size or a.access_size or elem
        key = (addr.dtype.str, addr.tobytes(), a.mask.tobytes(), elem, size, a.field_offset)
        got = self._known.get(key)
        if got is None:
            got = self._known[key] = _degree(addr, a.mask, elem, size, a.field_offset)
        return got


def _degree(addr: np.ndarray, live: np.ndarray, elem: int, size: int, field_offset: int) -> int:
    """Worst number of distinct 4-byte words any bank serves in one phase of one warp."""
    if np.count_nonzero(live) < 2:
        return 1
    words = (addr[live] * elem + field_offset) // 4
    owner = _phase_groups(addr.size, max(1, BANKS * 4 // max(4, size)))[live]
    span = size // 4
    if span > 1:                                 # a lane's 8 or 16 bytes are 2 or 4 words
        words = (words[:, None] + np.arange(span)).ravel()
        owner = np.repeat(owner, span)
    if np.bincount(owner * BANKS + words % BANKS).max() < 2:
        return 1                # no two lanes of a phase on one bank (the common case): no sort
    words = words - (int(words.min()) // BANKS) * BANKS      # non-negative, banks unchanged
    pairs = _sorted_distinct(owner * (1 << 40) + words)      # distinct (phase, word)
    keys = (pairs >> 40) * BANKS + (pairs & ((1 << 40) - 1)) % BANKS
    return int(np.bincount(keys).max())


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending: what np.unique gives, at a fifth of its cost on the few
    hundred values of one access (numpy's unique hashes first, which only pays on large arrays)."""
    ordered = np.sort(values, axis=None)
    keep = np.empty(ordered.size, dtype=bool)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


@lru_cache(maxsize=32)
def _phase_groups(threads: int, phase: int) -> np.ndarray:
    """The warp and phase each thread's lane is served in (read-only, shared by every call)."""
    lanes = np.arange(threads)
    group = (lanes // 32) * 32 + (lanes % 32) // phase
    group.setflags(write=False)
    return group


def _padding_fix(src: Source, a: Access, all_of_mem: list[Access], elem: int,
                 degrees: _Degrees) -> Fix | None:
    dims = a.mem.dims
    decl = a.mem.decl
    if dims is None or len(dims) != 2 or decl is None or (dims[1] * elem) % (BANKS * 4):
        return None
    if any(x.indices is None or len(x.indices) != 2 for x in all_of_mem):
        return None
    padded = dims[1] + 1
    for x in all_of_mem:
        before = degrees.of(x.indices[0] * dims[1] + x.indices[1], x, elem)
        after = degrees.of(x.indices[0] * padded + x.indices[1], x, elem)
        if after > before or (x.node.id == a.node.id and after > 1):
            return None
    size_node = _last_dimension(decl, a.mem.name)
    if size_node is None:
        return None
    old = size_node.text.decode()
    new = str(padded) if int_literal(old) is not None else f"{old} + 1"
    return Fix(f"Pad `{a.mem.name}` to [{dims[0]}][{padded}]", (replace(src, size_node, new),))


def _last_dimension(decl, name: str):
    for d in decl.children_by_field_id(FIELD.declarator):
        if d.type == "init_declarator":
            d = d.child_by_field_id(FIELD.declarator)
        if d is not None and d.type == "array_declarator":
            inner = d.child_by_field_id(FIELD.declarator)
            node = inner
            while node is not None and node.type == "array_declarator":
                node = node.child_by_field_id(FIELD.declarator)
            if node is not None and node.text.decode() == name:
                return d.child_by_field_id(FIELD.size)
    return None


def _check(ctx: Context) -> list[Finding]:
    return bank_conflict_findings(ctx.src, ctx.trace, ctx.facts)


RULE = Rule("bank-conflict", ('DICE-B001',), _check, needs_trace=True)
