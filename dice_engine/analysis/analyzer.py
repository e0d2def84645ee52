"""Static analysis of a whole file, once (`check_source`) or incrementally for an editor
(`Analyzer`): tree-sitter re-parses only what an edit touched, and each function's findings are
cached under its own text (plus the text of the functions it calls and the file facts it reads),
so a one-line edit re-analyzes one function."""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from tree_sitter import Point, Tree

from ..tsparse import parse_yielding

from .bank_conflict import bank_conflict_findings
from .coalescing import coalescing_findings
from .findings import Finding, Fix, TextEdit
from .overflow import overflow_findings
from .precision import precision_findings
from .race import race_findings
from .report import render_lines, shift_lines
from .simt import run_function
from .sync import sync_findings
from .syntax import FIELD, FileFacts, Function, Source, captures, encode, file_facts, functions, \
    launch_blocks, new_parser, text
from .types import Typer

log = logging.getLogger(__name__)


def check_source(text_: str | bytes, path: str = "<buffer>", arch: str = "sm_90") -> list[Finding]:
    """Static findings for one CUDA file. Never raises: a function the analyses cannot handle
    is skipped (and logged)."""
    return Analyzer(path, arch).update(text_)


class Analyzer:
    """Per-document analysis state for the language server."""

    def __init__(self, path: str = "<buffer>", arch: str = "sm_90") -> None:
        self.path = path
        self.arch = arch
        self._parser = new_parser()
        self._tree: Tree | None = None
        self._data = b""
        self._cache: dict[tuple, list[Finding]] = {}
        self._outlines: dict[tuple[bytes, str], _Outline] = {}

    @property
    def tree(self) -> Tree | None:
        """The tree of the text last given to `update` (None if that failed). The next
        `update` edits it in place, so use it before then."""
        return self._tree

    def update(self, text_: str | bytes) -> list[Finding]:
        try:
            data = encode(text_)
            self._tree = self._parse(data)
            self._data = data
            return self._analyze(Source(data, self.path))
        except Exception:                       # never let one odd file break the editor
            log.warning("analysis of %s failed", self.path, exc_info=True)
            self._tree = None
            return []

    # -- parsing --------------------------------------------------------------------------------

    def _parse(self, data: bytes) -> Tree:
        old = self._tree
        if old is None or not self._data:
            return parse_yielding(self._parser, data)
        before = self._data
        prefix = _common_prefix(before, data)
        suffix = _common_suffix(before, data, prefix)
        old_end, new_end = len(before) - suffix, len(data) - suffix
        old.edit(start_byte=prefix, old_end_byte=old_end, new_end_byte=new_end,
                 start_point=_point(before, prefix), old_end_point=_point(before, old_end),
                 new_end_point=_point(data, new_end))
        return parse_yielding(self._parser, data, old)

    # -- analysis -------------------------------------------------------------------------------

    def _analyze(self, src: Source) -> list[Finding]:
        root = self._tree.root_node
        every = functions(root)
        fns = [f for f in every if f.is_kernel or f.is_device]
        by_name = {f.name: f for f in fns}
        facts = file_facts(root)
        facts_key = hashlib.blake2b(repr((sorted(facts.constants.items()), sorted(facts.structs.items())))
                                    .encode(), digest_size=16).hexdigest()
        outlines: dict[tuple[bytes, str], _Outline] = {}
        calls: dict[str, list[str]] = {}
        syntactic: dict[int, list[Finding]] = {}   # per function body, this update only
        for f in every:
            text_key = (f.code, facts_key)
            outline = self._outlines.get(text_key)
            if outline is None:
                nodes = captures(f.body)
                outline = _outline(f, nodes, facts.constants)
                if f.is_kernel or f.is_device:
                    # analyzed now, while the query has its nodes in the CPU caches (2 ms less per
                    # full analysis than later, between thread analyses); these analyses read the
                    # file's constants and structs, not the block sizes still being gathered
                    syntactic[f.body.id] = _syntactic_findings(src, f, facts, nodes)
            outlines[text_key] = outline
            calls[f.name] = [n for n in outline.callees if n in by_name]
            for kernel, size in outline.launches.items():
                facts.block_sizes.setdefault(kernel, size)
        self._outlines = outlines
        closure = {f.name: _closure(f, by_name, calls) for f in fns}
        called = {c.name for f in fns if f.is_kernel for c in closure[f.name][1:]}
        cache: dict[tuple, list[Finding]] = {}
        out: list[Finding] = []
        seen: set[tuple] = set()
        for fn in fns:
            key = self._key(fn, closure[fn.name], facts, facts_key, fn.name in called)
            row = fn.node.start_point[0]
            cached = self._cache.get(key)
            if cached is None:
                own = syntactic.get(fn.body.id)
                if own is None:                 # its outline was reused, its nodes not captured
                    own = _syntactic_findings(src, fn, facts, captures(fn.body))
                fresh = self._function_findings(src, fn, by_name, facts, called, own)
                cached = [_shift(f, -row) for f in fresh]
            cache[key] = cached
            for f in cached:
                f = _shift(f, row)
                f.file = self.path
                f.message = render_lines(f.message)
                ident = (f.code, f.line, f.column, f.end_line, f.end_column)
                if ident not in seen:
                    seen.add(ident)
                    out.append(f)
        self._cache = cache
        out.sort(key=lambda f: (f.line, f.column, f.code))
        return out

    def _key(self, fn: Function, closure: list[Function], facts: FileFacts, facts_key: str,
             called: bool) -> tuple:
        """Everything a function's findings depend on: its text, its callees' texts and their
        places relative to it, its column, the file's constants and structs, its launch block
        size, and whether a kernel calls it (then its thread analysis happens in the callers).
        The texts themselves, not digests: a dict compares them on a hash match, so no collision
        can reuse the wrong findings."""
        row, column = fn.node.start_point
        # findings inside a callee sit at its offset from `fn`
        callees = tuple((c.code, c.node.start_point[0] - row, c.node.start_point[1]) for c in closure)
        return column, facts.block_sizes.get(fn.name), facts_key, called, callees

    def _function_findings(self, src: Source, fn: Function, by_name: dict[str, Function],
                           facts: FileFacts, called: set[str], syntactic: list[Finding]) -> list[Finding]:
        out = list(syntactic)
        if fn.is_kernel or fn.name not in called:
            try:
                trace = run_function(fn, by_name, facts)
            except RecursionError:
                log.info("thread analysis of %s: input nested too deeply", fn.name)
                return out
            except Exception:
                log.warning("thread analysis of %s failed", fn.name, exc_info=True)
                return out
            out += _guarded(lambda s, t, _f: sync_findings(s, t), src, trace, facts)
            out += _guarded(lambda s, t, _f: race_findings(s, t), src, trace, facts)
            out += _guarded(coalescing_findings, src, trace, facts)
            out += _guarded(bank_conflict_findings, src, trace, facts)
        return out


def _syntactic_findings(src: Source, fn: Function, facts: FileFacts,
                        found: dict[str, list]) -> list[Finding]:
    """Precision and overflow findings of one function (`found`: its body's captures)."""
    typer = Typer(fn, facts, found.get("decl", []))     # shared by the two analyses
    return _guarded(precision_findings, src, fn, typer, found) + \
        _guarded(overflow_findings, src, facts, typer, found)


def _guarded(analysis, *args) -> list[Finding]:
    try:
        return analysis(*args)
    except RecursionError:       # expressions nested hundreds deep: skipped, a known limit
        log.info("%s: input nested too deeply", getattr(analysis, "__name__", "analysis"))
        return []
    except Exception:
        log.warning("%s failed", getattr(analysis, "__name__", "analysis"), exc_info=True)
        return []


@dataclass(frozen=True)
class _Outline:
    """What one function contributes to the file's picture: the names it calls and the block
    sizes it launches kernels with. Memoized by the function's text across updates."""
    callees: tuple[str, ...]
    launches: dict[str, tuple[int, int, int]]


def _outline(fn: Function, found: dict[str, list], constants: dict[str, int]) -> _Outline:
    names: list[str] = []
    for call in found.get("call", ()):
        name = text(call.child_by_field_id(FIELD.function)).split("::")[-1]
        if name not in names:
            names.append(name)
    launches = launch_blocks(found, constants) if b"<<<" in fn.code else {}   # most launch nothing
    return _Outline(tuple(names), launches)


def _closure(fn: Function, by_name: dict[str, Function], calls: dict[str, list[str]]) -> list[Function]:
    """`fn` and every function of the file it calls, transitively, in a stable order."""
    order = [fn]
    for f in order:
        for name in calls.get(f.name, ()):
            callee = by_name[name]
            if callee not in order:
                order.append(callee)
    return order


def _shift(f: Finding, rows: int) -> Finding:
    fix = f.fix
    if fix is not None:
        fix = Fix(fix.title, tuple(TextEdit(e.line + rows, e.column, e.end_line + rows, e.end_column,
                                            e.new_text) for e in fix.edits))
    return Finding(f.file, f.line + rows, f.column, f.end_line + rows, f.end_column, f.category, f.code,
                   f.severity, shift_lines(f.message, rows), f.source, fix, f.confirmed, dict(f.data))


def _common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:                      # binary search on slice equality: C-speed comparisons
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: bytes, b: bytes, prefix: int) -> int:
    n = min(len(a), len(b)) - prefix
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _point(data: bytes, offset: int) -> Point:
    row = data.count(b"\n", 0, offset)
    line_start = data.rfind(b"\n", 0, offset) + 1
    return Point(row, offset - line_start)
