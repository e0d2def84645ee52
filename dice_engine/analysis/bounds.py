"""`bounds`: a global thread index used without a bounds check where the grid is rounded up.

DICE-X001 needs two pieces of evidence from the file: a launch of the kernel whose grid is a
ceiling division (`(n + block - 1) / block`, `(n + 255) / 256`, `div_up(n, b)`), so the last
block has threads past the end; and an index built from `blockIdx` and `threadIdx` that reaches
a global-memory access while nothing in the kernel compares it, or any variable computed from it,
with a bound (`if (i < n)`, an early `return`, a grid-stride loop's condition). One finding per
such index, at its first access.
"""
from __future__ import annotations

import re

from tree_sitter import Node

from .findings import Finding
from .report import finding
from .rule import Context, Rule
from .syntax import FIELD, operator, text

_IDENTIFIER = re.compile(r"(?<![.\w])[A-Za-z_]\w*")
_COMPARISONS = frozenset({"<", "<=", ">", ">="})


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
    for node in ctx.found.get("binary", ()):
        if operator(node) in _COMPARISONS:
            for name in _IDENTIFIER.findall(ctx.facts.text(node)):
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
        reached = set().union(*(depends.get(n, set()) for n in _IDENTIFIER.findall(ctx.facts.text(index))))
        for root in sorted((reached & unguarded) - reported):
            reported.add(root)
            out.append(finding(ctx.src, access, "DICE-X001", _message(text(access), root)))
    return out


def _message(access: str, root: str) -> str:
    return (f"`{access}` is indexed by `{root}`, a global thread index, and this kernel is launched "
            "with a grid rounded up to whole blocks, so the last block's threads past the end read or "
            f"write out of bounds: nothing compares `{root}` with the extent. Guard the work with "
            f"`if ({root} < n)` (keeping any barrier outside the branch).")


def _initializer_names(ctx: Context) -> dict[str, tuple[str, set[str]]]:
    """Each local variable's initializer (the last assignment's too) and the names it reads."""
    out: dict[str, tuple[str, set[str]]] = {}
    for decl in ctx.found.get("decl", ()):
        for d in decl.children_by_field_id(FIELD.declarator):
            if d.type == "init_declarator":
                _record(ctx, out, d.child_by_field_id(FIELD.declarator), d.child_by_field_id(FIELD.value))
    for node in ctx.found.get("assign", ()):
        _record(ctx, out, node.child_by_field_id(FIELD.left), node.child_by_field_id(FIELD.right))
    return out


def _record(ctx: Context, out: dict[str, tuple[str, set[str]]], name: Node | None,
            value: Node | None) -> None:
    while name is not None and name.type in ("pointer_declarator", "reference_declarator"):
        name = name.child_by_field_id(FIELD.declarator)     # `float* out = dst + …` declares `out`
    if name is None or value is None or name.type != "identifier":
        return
    written = ctx.facts.text(value)
    previous = out.get(text(name), ("", set()))
    out[text(name)] = (previous[0] + " " + written, previous[1] | set(_IDENTIFIER.findall(written)))


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


RULE = Rule("bounds", ("DICE-X001",), bounds_findings)
