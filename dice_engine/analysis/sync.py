"""`sync`: barriers not every thread reaches, and warp-synchronous masks that do not match the
lanes executing them (from the SIMT trace's divergence records)."""
from __future__ import annotations

from tree_sitter import Node

from .rule import Context, Rule
from .findings import Finding, Fix, TextEdit
from .report import finding, line_of
from .syntax import FIELD, Source, text, walk
from .trace import SyncEvent, Trace


def sync_findings(src: Source, trace: Trace) -> list[Finding]:
    return [_finding(src, event) for event in trace.sync]


def _finding(src: Source, event: SyncEvent) -> Finding:
    name = text(event.node).split("(")[0]
    call = f"`{name}`"
    barrier = event.data.get("barrier")
    if barrier is not None:     # the call of a helper that waits at a barrier
        call += f", which waits at `{text(barrier).split('(')[0]}` (line {line_of(barrier)}),"
    why = event.reason
    if event.code == "DICE-S001":
        cond = why.child_by_field_id(FIELD.condition) if why is not None else None
        msg = (f"{call} runs only in threads for which `{text(cond).strip('()')}` (line {line_of(why)}) "
               "holds, and that condition depends on the thread: threads that skip the branch never "
               "arrive, so the block hangs or the barrier silently synchronizes the wrong threads "
               "(undefined behavior). Make the barrier unconditional: close the branch before it and "
               "reopen it after.")
        fix = _hoist_fix(src, event.node, why) if barrier is None else None
        return finding(src, event.node, event.code, msg, fix=fix)
    if event.code == "DICE-S002":
        kind = text(why).split()[0].rstrip(";") if why is not None else "return"
        msg = (f"{call} follows a thread-dependent `{kind}` (line {line_of(why)}): the threads that "
               "left never reach the barrier, so the others wait forever or proceed unsynchronized "
               "(undefined behavior). Keep every thread alive to the barrier and guard only the work "
               "(e.g. `if (i < n) { ... }` instead of an early return).")
        return finding(src, event.node, event.code, msg)
    if event.code == "DICE-S003":
        msg = (f"{call} is inside a loop whose trip count depends on the thread (line {line_of(why)}): "
               "threads that finish early stop arriving while the others wait at the barrier "
               "(deadlock or undefined behavior). Loop a block-uniform number of times (e.g. over "
               "tiles, with `if (i < n)` guarding the work) so every thread runs every barrier.")
        return finding(src, event.node, event.code, msg)
    op, detail = event.data.get("op", name), event.data.get("detail", "")
    msg = (f"`{op}` names lanes in its mask that do not all execute it ({detail}): a lane named in the "
           "mask that never arrives hangs the warp or returns undefined values, and an executing "
           "lane outside the mask is undefined behavior. Compute the mask from the condition "
           "(`__ballot_sync(__activemask(), cond)`) or move the call out of the divergent branch.")
    return finding(src, event.node, event.code, msg, data={"detail": detail})


def _hoist_fix(src: Source, barrier: Node, branch: Node | None) -> Fix | None:
    """Move a barrier that is the first or last statement of an `if` without `else` to just
    before / after the `if`. Threads that took the branch see the same order of events; those
    that did not now also arrive, which is what a barrier there needs. Hoisting above the `if`
    makes the condition run after the barrier, so that is only offered for a condition that
    reads no memory and calls nothing."""
    if branch is None or branch.type != "if_statement" or branch.child_by_field_id(FIELD.alternative):
        return None
    stmt = barrier.parent
    body = branch.child_by_field_id(FIELD.consequence)
    if stmt is None or stmt.type != "expression_statement" or body is None or stmt.parent != body:
        return None
    stmts = [c for c in body.named_children if c.type != "comment"]
    if not stmts or stmt not in (stmts[0], stmts[-1]):
        return None
    if stmt != stmts[-1] and _touches_memory(branch.child_by_field_id(FIELD.condition)):
        return None
    indent = _indent(src, branch)
    line_bytes = src.lines[stmt.start_point[0]]
    own_line = line_bytes[:stmt.start_point[1]].strip() == b"" and \
        line_bytes[stmt.end_point[1]:].strip() == b""
    if own_line:
        row = stmt.start_point[0]
        delete = TextEdit(row, 0, row + 1, 0, "")
    else:
        l0, c0, l1, c1 = src.span(stmt)
        delete = TextEdit(l0, c0, l1, c1, "")
    barrier_text = text(stmt)
    if stmt == stmts[-1]:
        r, c = branch.end_point
        col = src.column(r, c)
        insert = TextEdit(r, col, r, col, f"\n{indent}{barrier_text}")
        edits = (delete, insert) if (delete.line, delete.column) < (r, col) else (insert, delete)
    else:
        r, c = branch.start_point
        col = src.column(r, c)
        insert = TextEdit(r, col, r, col, f"{barrier_text}\n{indent}")
        edits = (insert, delete)
    return Fix("Move the barrier out of the divergent branch", edits)


def _touches_memory(node: Node | None) -> bool:
    return node is not None and any(
        n.type in ("subscript_expression", "pointer_expression", "call_expression",
                   "assignment_expression", "update_expression") for n in walk(node))


def _indent(src: Source, node: Node) -> str:
    line = src.lines[node.start_point[0]].decode("utf-8", errors="replace")
    return line[: len(line) - len(line.lstrip())]


def _check(ctx: Context) -> list[Finding]:
    return sync_findings(ctx.src, ctx.trace)


RULE = Rule("sync", ('DICE-S001', 'DICE-S002', 'DICE-S003', 'DICE-S004'), _check, needs_trace=True)
