"""`bounds`: a global thread index used without a bounds check where the grid is rounded up
(DICE-X001), and a loop bound past the end of the array it indexes (DICE-X002, below).

DICE-X001 needs two pieces of evidence from the file: a launch of the kernel whose grid is a
ceiling division (`(n + block - 1) / block`, `(n + 255) / 256`, `div_up(n, b)`), so the last
block has threads past the end; and an index built from `blockIdx` and `threadIdx` that reaches
a global-memory access while nothing in the kernel compares it, or any variable computed from it,
with a bound (`if (i < n)`, an early `return`, a grid-stride loop's condition) or passes it to a
branch's condition (`if (inside(i, n))`), and the access does not clamp it (`x[min(i, n - 1)]`).
One finding per such index, at its first access.
"""
from __future__ import annotations

import re

from tree_sitter import Node

from .findings import Finding
from .report import finding
from .rule import Context, Rule
from .syntax import (FIELD, const_eval, counts_down, initialized_locals, loop_bound, loop_start, operator,
                     text, walk)

_IDENTIFIER = re.compile(r"(?<![.\w])[A-Za-z_]\w*")
_COMPARISONS = frozenset({"<", "<=", ">", ">="})
_CLAMP = re.compile(r"\b(?:min|max|clamp)\w*\s*\(")
_BRANCHES = frozenset({"if_statement", "while_statement", "for_statement", "do_statement",
                       "conditional_expression"})


def bounds_findings(ctx: Context) -> list[Finding]:
    if not ctx.fn.is_kernel or not ctx.launch.rounded_up:
        return []
    uses = _initializer_names(ctx)
    roots = {name for name, (value, _) in uses.items() if "blockIdx" in value and "threadIdx" in value}
    if not roots:
        return []
    # values loaded from memory (`int v = in[i] + d`) are data, not indices: comparing one
    # bounds nothing, so thread indices are followed only through index arithmetic
    arithmetic = {name: entry for name, entry in uses.items() if "[" not in entry[0]}
    depends = _roots_of(arithmetic, roots)
    guarded: set[str] = set()
    comparisons = [b for b in ctx.found.get("binary", ()) if operator(b) in _COMPARISONS]
    for node in comparisons + _conditions(ctx.fn.body):
        for name in _IDENTIFIER.findall(ctx.facts.text(node)):     # `i < n`, `if (inside(i, n))`
            guarded |= depends.get(name, set())
    unguarded = roots - guarded
    if not unguarded:
        return []
    pointers = _global_pointers(ctx, uses)
    out: list[Finding] = []
    reported: set[str] = set()
    for index in ctx.found.get("index", ()):
        access = index.parent
        array = access.child_by_field_id(FIELD.argument) if access is not None else None
        if array is None or text(array) not in pointers:
            continue
        if _CLAMP.search(ctx.facts.text(index)):      # `x[min(i, n - 1)]` stays in range
            continue
        reached = set().union(*(depends.get(n, set()) for n in _IDENTIFIER.findall(ctx.facts.text(index))))
        for root in sorted((reached & unguarded) - reported):
            reported.add(root)
            out.append(finding(ctx.src, access, "DICE-X001", _message(text(access), root)))
    return out


def _conditions(body: Node) -> list[Node]:
    """The conditions of the branches and loops under `body` (a helper's verdict counts too)."""
    return [condition for node in walk(body)
            if node.type in _BRANCHES and (condition := node.child_by_field_id(FIELD.condition)) is not None]


def _message(access: str, root: str) -> str:
    return (f"`{access}` is indexed by `{root}`, a global thread index, and this kernel is launched "
            "with a grid rounded up to whole blocks, so the last block's threads past the end read or "
            f"write out of bounds: nothing compares `{root}` with the extent. Guard the work with "
            f"`if ({root} < n)` (keeping any barrier outside the branch).")


def _initializer_names(ctx: Context) -> dict[str, tuple[str, set[str]]]:
    """Each local variable's initializer (the last assignment's too) and the names it reads."""
    out: dict[str, tuple[str, set[str]]] = {}
    for name, value in initialized_locals(ctx.found):
        _record(ctx, out, name, value)
    for node in ctx.found.get("assign", ()):
        left, right = node.child_by_field_id(FIELD.left), node.child_by_field_id(FIELD.right)
        if left is not None and right is not None and left.type == "identifier":
            _record(ctx, out, text(left), right)
    return out


def _record(ctx: Context, out: dict[str, tuple[str, set[str]]], name: str, value: Node) -> None:
    written = ctx.facts.text(value)
    previous = out.get(name, ("", set()))
    out[name] = (previous[0] + " " + written, previous[1] | set(_IDENTIFIER.findall(written)))


def _roots_of(uses: dict[str, tuple[str, set[str]]], roots: set[str]) -> dict[str, set[str]]:
    """For every variable, the thread indices its value is computed from (transitively)."""
    depends: dict[str, set[str]] = {r: {r} for r in roots}
    changed = True
    while changed:
        changed = False
        for name, (_, reads) in uses.items():
            found = set().union(*(depends.get(r, set()) for r in reads if r != name))
            found |= depends.get(name, set())
            if found != depends.get(name, set()):
                depends[name] = found
                changed = True
    return depends


def _global_pointers(ctx: Context, uses: dict[str, tuple[str, set[str]]]) -> set[str]:
    """The kernel's pointer parameters and the local pointers computed from them."""
    pointers = {name for name, _, indirect in ctx.fn.params if indirect}
    for name, (_, reads) in uses.items():
        if reads & pointers:
            pointers.add(name)
    return pointers


def inclusive_bound_findings(ctx: Context) -> list[Finding]:
    """DICE-X002: `for (c = ...; c <= n; ...) a[c]` where `a` holds n elements: another loop of the
    kernel reads it under `c < n` (and never past the loop variable, as a CSR row_ptr's `i + 1`),
    or `a` is a row of a matrix whose row stride is n (`a = x + row * n`); and any constant loop
    bound that takes `a[c]` past an array declared with a constant extent (`__constant__`,
    `__shared__`, a local or `__device__` array: `float taps[31]` read for c up to 31)."""
    if not ctx.fn.is_kernel:
        return []
    loops = [(*header, node) for node in walk(ctx.fn.body)
             if node.type == "for_statement" and (header := loop_bound(node)) is not None]
    out = _declared_overruns(ctx, loops) + _descending_overruns(ctx)
    if not any(op == "<=" for _, op, _, _ in loops):
        return out
    strict: set[tuple[str, str]] = set()
    beyond: set[str] = set()          # arrays some loop reads past its variable (`a[i + 1]`)
    for var, op, bound, node in loops:
        for array, index, _ in _subscripts(node.child_by_field_id(FIELD.body)):
            if index == var and op == "<":
                strict.add((array, bound))
            elif re.fullmatch(rf"{re.escape(var)}\s*\+\s*\w+", index):
                beyond.add(array)
    rows = _row_strides(ctx)
    overrun = {f.line for f in out}
    for var, op, bound, node in loops:
        if op != "<=" or node.child_by_field_id(FIELD.condition).start_point[0] in overrun:
            continue
        for array, index, _ in _subscripts(node.child_by_field_id(FIELD.body)):
            if index != var or array in beyond:
                continue
            if (array, bound) in strict or rows.get(array) == bound:
                condition = node.child_by_field_id(FIELD.condition)
                out.append(finding(ctx.src, condition, "DICE-X002", _inclusive_message(array, var, bound)))
                break
    return out


def _declared_overruns(ctx: Context, loops: list[tuple[str, str, str, Node]]) -> list[Finding]:
    """Loops whose constant bound takes `a[v]` past the constant extent `a` is declared with."""
    out = []
    for var, op, bound, node in loops:
        last = const_eval(bound, ctx.constants)
        if last is None:
            continue
        last -= op == "<"
        if (past := _past_extent(ctx, node, var, last)) is not None:
            out.append(finding(ctx.src, node.child_by_field_id(FIELD.condition), "DICE-X002",
                               _declared_message(past[0], past[1], var, op, bound, last)))
    return out


def _past_extent(ctx: Context, loop: Node, var: str, largest: int) -> tuple[str, int] | None:
    """(array, its declared extent) of the first `a[var]` in `loop`'s body, with no test of `var`
    on the way, that `var`'s largest value `largest` takes past that extent; None if none does."""
    for array, index, subscript in _subscripts(loop.child_by_field_id(FIELD.body)):
        if index != var or _tested_on_the_way(subscript, loop, var):
            continue
        extent = _declared_extent(array, loop, ctx.facts.constants)
        if extent is not None and largest >= extent:
            return array, extent
    return None


def _descending_overruns(ctx: Context) -> list[Finding]:
    """Loops counting down from a constant start that takes `a[v]` past `a`'s declared extent
    (`for (j = TERMS; j > 0; --j) c[j]` over `c[TERMS]`): the first step is already out."""
    out = []
    for node in walk(ctx.fn.body):
        if node.type != "for_statement" or (var := counts_down(node)) is None:
            continue
        start_text = loop_start(node, var)
        start = const_eval(start_text, ctx.constants) if start_text is not None else None
        if start is not None and (past := _past_extent(ctx, node, var, start)) is not None:
            out.append(finding(ctx.src, node.child_by_field_id(FIELD.initializer), "DICE-X002",
                               _descending_message(past[0], past[1], var, start_text, start)))
    return out


def _declared_extent(name: str, at: Node, constants: dict[str, int]) -> int | None:
    """The constant extent of the one-dimensional array `name` as seen at `at`: its declaration in
    the nearest enclosing block (before `at`) or at file scope (a `__constant__` table, a
    `__device__` array); None when that declaration is not such an array."""
    scope: Node | None = at.parent
    while scope is not None:
        if scope.type in ("compound_statement", "translation_unit"):
            for decl in scope.named_children:
                if decl.start_byte >= at.start_byte:
                    break
                if decl.type == "declaration" and (found := _array_declarator(decl, name)) is not None:
                    size = found.child_by_field_id(FIELD.size)
                    extent = const_eval(text(size), constants) if size is not None else None
                    return extent if extent is not None and extent > 0 else None
        scope = scope.parent
    return None


def _array_declarator(decl: Node, name: str) -> Node | None:
    """The declarator of `name` in `decl` when it is a one-dimensional array; None otherwise."""
    for d in decl.children_by_field_id(FIELD.declarator):
        if d.type == "init_declarator":
            d = d.child_by_field_id(FIELD.declarator)
        if d is not None and d.type == "array_declarator":
            inner = d.child_by_field_id(FIELD.declarator)
            if inner is not None and inner.type == "identifier" and text(inner) == name:
                return d
    return None


def _subscripts(body: Node | None) -> list[tuple[str, str, Node]]:
    """(array, index text, the subscript) of every one-index subscript of a named array under
    `body`."""
    out = []
    for node in walk(body) if body is not None else ():
        if node.type == "subscript_expression":
            array = node.child_by_field_id(FIELD.argument)
            indices = node.child_by_field_id(FIELD.indices)
            if array is not None and array.type == "identifier" and indices is not None \
                    and len(indices.named_children) == 1:
                out.append((text(array), text(indices.named_children[0]), node))
    return out


def _tested_on_the_way(node: Node, loop: Node, var: str) -> bool:
    """Whether a branch between `loop` and `node` tests `var` (`if (k < TAPS) a[k]`)."""
    mentions = re.compile(rf"(?<![\w.]){re.escape(var)}(?!\w)")
    branch = node.parent
    while branch is not None and branch != loop:
        condition = branch.child_by_field_id(FIELD.condition) if branch.type in _BRANCHES else None
        if condition is not None and mentions.search(text(condition)):
            return True
        branch = branch.parent
    return False


def _row_strides(ctx: Context) -> dict[str, str]:
    """Local pointers set to a row of a row-major matrix (`x + (size_t)row * cols`): the stride."""
    out = {}
    for name, value in initialized_locals(ctx.found):
        m = _ROW_POINTER.fullmatch(" ".join(ctx.facts.text(value).split()))
        if m:
            out[name] = m.group("stride")
    return out


# base + (cast) row * stride, the row a name, a field (blockIdx.x) or a parenthesized expression
_ROW_POINTER = re.compile(r"\w+\s*\+\s*(?:\([\w ]+\)\s*)?(?:[\w.]+|\([^()]*\))\s*\*\s*(?P<stride>\w+)")


def _inclusive_message(array: str, var: str, bound: str) -> str:
    return (f"`{var} <= {bound}` runs one step past the end: `{array}` holds {bound} elements "
            f"(indices 0 to {bound} - 1), so the last iteration reads or writes `{array}[{bound}]`, "
            f"out of bounds. Loop while `{var} < {bound}`.")


def _declared_message(array: str, extent: int, var: str, op: str, bound: str, last: int) -> str:
    past = "one step past the end" if last == extent else f"{last - extent + 1} steps past the end"
    return (f"`{var} {op} {bound}` runs {past}: `{array}` is declared with {extent} elements (indices 0 to "
            f"{extent - 1}), so the loop reads or writes `{array}[{last}]`, out of bounds. Loop while "
            f"`{var} < {extent}`, or declare `{array}` with the extent the loop needs.")


def _descending_message(array: str, extent: int, var: str, start_text: str, start: int) -> str:
    return (f"`{var}` starts at `{start_text}` ({start}): `{array}` is declared with {extent} elements "
            f"(indices 0 to {extent - 1}), so the loop's first step reads or writes `{array}[{start}]`, "
            f"out of bounds. Start at `{extent - 1}` and loop while `{var} >= 0` (or index "
            f"`{array}[{var} - 1]`).")


def _check(ctx: Context) -> list[Finding]:
    return bounds_findings(ctx) + inclusive_bound_findings(ctx)


RULE = Rule("bounds", ("DICE-X001", "DICE-X002"), _check)
