"""`precision` (DICE-P006): one float total that more atomicAdds build than a float can count.

A float holds 24 significant bits. A total built by `atomicAdd(&sum[0], x[i])` from every thread
of a grid grows until an addend is below half its unit in the last place: past about 2^24 like-
signed contributions of similar size the total stops growing (adding 0.5 to 2^27 adds nothing),
and with mixed signs its error still grows with the count, in an order that changes from run to
run. The count is read from the SIMT trace and the file's launch sites: the threads of the
modeled block that reach the atomic, times the launch's blocks when every block adds to the same
address (the address depends on no block index), times the constant trip counts of the loops
around it; and at least the bound of a strided loop around it (`for (i = tid; i < n; i += stride)`
visits every i below a known n once, whatever the grid). A count that is not known from the file
(a grid computed at run time) is not judged.
"""
from __future__ import annotations

from math import prod

import numpy as np
from tree_sitter import Node

from .findings import Finding
from .report import finding
from .rule import Context, Rule
from .syntax import FIELD, const_eval, loop_bound, text, trip_count
from .trace import UNIFORM, Access

LIMIT = 1 << 24          # float's significand: a like-signed total stalls past this many addends
FLOAT_ADDS = frozenset({"atomicAdd", "atomicAdd_system"})   # grid-wide; _block totals stay in a block


def atomic_total_findings(ctx: Context) -> list[Finding]:
    trace = ctx.trace
    if trace is None or b"atomicAdd" not in ctx.fn.code:
        return []
    out: list[Finding] = []
    seen: set[int] = set()
    for access in trace.accesses:
        if access.kind != "atomic" or access.node.id in seen or access.mem.elem != "float":
            continue
        seen.add(access.node.id)
        call = _call_of(access.node)
        if call is None or text(call.child_by_field_id(FIELD.function)) not in FLOAT_ADDS:
            continue
        if not _one_address(access):
            continue
        count = max(_grid_adds(access, ctx.launch.grid), _strided_bound(access.node, ctx.constants))
        if count > LIMIT:
            out.append(finding(ctx.src, call, "DICE-P006", _message(access.mem.name, count),
                               data={"contributions": count}))
    return out


def _one_address(access: Access) -> bool:
    """Whether every thread of every block adds to the same element: the address is the same in
    all threads of the modeled block and depends on nothing but literals (no block index)."""
    if access.addr is None or access.addr_level != UNIFORM or not access.exact:
        return False
    return bool(access.mask.any()) and np.unique(access.addr[access.mask]).size == 1


def _grid_adds(access: Access, grid: tuple[int, int, int] | None) -> int:
    """The adds the grid makes to the one address: the block's threads that reach the atomic,
    times the blocks, times the constant trips of the loops around it; 0 without a known grid."""
    if grid is None:
        return 0
    threads = int(np.count_nonzero(access.mask))
    trips = prod(step.trip for step in access.iterations if step.trip)
    return threads * prod(grid) * trips


def _strided_bound(node: Node, constants: dict[str, int]) -> int:
    """The largest known bound `n` of a loop `for (...; v < n; v += step)` around `node` whose
    step is not 1 (a grid- or block-stride loop: together the threads visit every v below n); 0
    when there is none. An address that differs between iterations gives no total, so this
    counts only for one address (`_one_address`)."""
    best = 0
    loop = node.parent
    while loop is not None:
        header = loop_bound(loop) if loop.type == "for_statement" else None
        if header is not None:
            update = loop.child_by_field_id(FIELD.update)
            if update is not None and "+=" in text(update) and trip_count(loop, constants) is None:
                best = max(best, const_eval(header[2], constants) or 0)
        loop = loop.parent
    return best


def _call_of(node: Node) -> Node | None:
    """The call whose first argument is `node` (`&sum[0]`, `sum`, `sum + 0`)."""
    parent = node.parent
    while parent is not None and parent.type not in ("argument_list", "compound_statement"):
        parent = parent.parent
    if parent is None or parent.type != "argument_list":
        return None
    return parent.parent if parent.parent is not None and parent.parent.type == "call_expression" else None


def _message(target: str, count: int) -> str:
    return (f"the grid's atomicAdds land on one float of `{target}`, at least {count:,} adds (2^"
            f"{count.bit_length() - 1}): past 2^24 like-signed addends a float total stops growing (each add "
            "is rounded to the total's 24 bits) and its error depends on an order that changes run to run. "
            "Reduce within each block first (warp shuffles, then one atomicAdd per block), or accumulate "
            "per-block partials and add them in a second pass (in double if they are many).")


RULE = Rule("atomic total", ("DICE-P006",), atomic_total_findings, needs_trace=True)
