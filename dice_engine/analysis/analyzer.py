"""Static analysis of a whole file, once (`check_source`) or incrementally for an editor
(`Analyzer`): tree-sitter re-parses only what an edit touched, and each function's findings are
cached under its own text (plus the text of the functions it calls and the file facts it reads),
so a one-line edit re-analyzes one function."""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, replace

from tree_sitter import Point, Tree

from ..tsparse import parse_yielding
from . import registry
from .findings import Finding, Fix, TextEdit
from .report import render_lines, shift_lines
from .rule import Context, Rule
from .simt import run_function
from .syntax import FIELD, NO_LAUNCH, FileFacts, Function, LaunchFacts, LaunchSite, Source, byte_point, \
    captures, constant_calls, encode, file_facts, forwarded_constants, functions, launch_facts, \
    launch_sites, new_parser, raised_smem_limits, template_values, text

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
        self._outlines: dict[tuple[bytes, tuple], _Outline] = {}
        self._rewrapped: dict[tuple, tuple[LaunchSite, ...]] = {}
        self._launch_memo: dict[tuple, LaunchFacts] = {}

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
        facts_key = _facts_key(facts)
        # each function sees the constants defined where it stands (#define/#undef)
        views = {f.node.id: _view(facts, facts_key, f) for f in every}
        outlines: dict[tuple[bytes, tuple], _Outline] = {}
        calls: dict[str, list[str]] = {}
        found: dict[int, dict[str, list]] = {}     # per function body, this update only
        sites: list[LaunchSite] = []
        host_calls: list[tuple[str, tuple[int | None, ...]]] = []
        for f in every:
            view, view_key = views[f.node.id]
            text_key = (f.code, view_key)
            outline = self._outlines.get(text_key)
            if outline is None:
                nodes = captures(f.body)
                outline = _outline(f, nodes, view.constants)
                if f.is_kernel or f.is_device:
                    found[f.body.id] = nodes          # for the rules, should the function need them
            outlines[text_key] = outline
            calls[f.name] = [n for n in outline.callees if n in by_name]
            sites += [site.placed(f.node.start_byte) for site in outline.launches]
            host_calls += outline.constant_calls
        self._outlines = outlines
        if host_calls:
            sites = self._through_wrappers(every, views, outlines, host_calls, sites)
        if any(site.oversized for site in sites):     # a raised limit makes a large launch fine
            raised = raised_smem_limits(src.data)
            sites = [replace(site, oversized=None)
                     if site.oversized and (raised is None or site.kernel in raised) else site
                     for site in sites]
        for site in sites:
            if site.block is not None:
                facts.block_sizes.setdefault(site.kernel, site.block)
        by_kernel: dict[str, list[LaunchSite]] = {}
        for site in sites:
            by_kernel.setdefault(site.kernel, []).append(site)
        launches: dict[str, LaunchFacts] = {}
        memo: dict[tuple, LaunchFacts] = {}     # by kernel text and sites, across updates
        for f in fns:
            mine = by_kernel.get(f.name) if f.is_kernel else None
            if mine:
                key = (f.code, tuple(mine))
                got = memo[key] = self._launch_memo.get(key) or launch_facts(f, mine)
                launches[f.name] = got
            else:
                launches[f.name] = NO_LAUNCH
        self._launch_memo = memo
        for f in fns:
            if f.template_params:       # `template <int TILE>`: the sizes its launches (or defaults) give
                view, _ = views[f.node.id]
                bound = template_values(f, by_kernel.get(f.name, []), view.constants)
                if bound:
                    view = replace(view, constants={**view.constants, **bound},
                                   scope=view.scope + tuple(sorted(bound.items())))
                    views[f.node.id] = (view, (facts_key, view.scope))
        closure = {f.name: _closure(f, by_name, calls) for f in fns}
        called = {c.name for f in fns if f.is_kernel for c in closure[f.name][1:]}
        cache: dict[tuple, list[Finding]] = {}
        out: list[Finding] = []
        seen: set[tuple] = set()
        for fn in fns:
            view, view_key = views[fn.node.id]
            key = self._key(fn, closure[fn.name], facts, view_key, fn.name in called, launches[fn.name])
            row = fn.node.start_point[0]
            cached = self._cache.get(key)
            if cached is None:
                nodes = found.get(fn.body.id)
                if nodes is None:               # its outline was reused, its nodes not captured
                    nodes = captures(fn.body)
                ctx = Context(src, fn, view, nodes, launches[fn.name])
                fresh = self._function_findings(src, fn, by_name, view, called, ctx)
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

    def _through_wrappers(self, every: list[Function], views: dict,
                          outlines: dict[tuple[bytes, tuple], _Outline],
                          host_calls: list, sites: list[LaunchSite]) -> list[LaunchSite]:
        """`sites` with the launches of host wrappers re-read with the constants their callers
        pass (`launch_add(m, b, 120000, 40000)` calling `add<<<grid(1, rows)>>>(m, b, rows, cols)`).
        Memoized by the wrapper's text, facts and those constants, across updates."""
        rewrapped: dict[tuple, tuple[LaunchSite, ...]] = {}
        for f in every:
            view, view_key = views[f.node.id]
            outline = outlines[(f.code, view_key)]
            if not outline.launches:
                continue
            passed = forwarded_constants(f, host_calls)
            if passed:
                key = (f.code, view_key, tuple(sorted(passed.items())))
                again = self._rewrapped.get(key)
                if again is None:
                    constants = {**view.constants, **passed}
                    again = tuple(launch_sites(captures(f.body), constants, f.node.start_byte))
                rewrapped[key] = again
                before = [s.placed(f.node.start_byte) for s in outline.launches]
                sites = [s for s in sites if s not in before] + [s.placed(f.node.start_byte) for s in again]
        self._rewrapped = rewrapped
        return sites

    def _key(self, fn: Function, closure: list[Function], facts: FileFacts, facts_key: tuple,
             called: bool, launch: LaunchFacts) -> tuple:
        """Everything a function's findings depend on: its text, its callees' texts and their
        places relative to it, its column, the file's constants and structs, its launch block
        size, grid and constant arguments, and whether a kernel calls it (then its thread
        analysis happens in the callers).
        The texts themselves, not digests: a dict compares them on a hash match, so no collision
        can reuse the wrong findings."""
        row, column = fn.node.start_point
        # findings inside a callee sit at its offset from `fn`
        callees = tuple((c.code, c.node.start_point[0] - row, c.node.start_point[1]) for c in closure)
        return column, facts.block_sizes.get(fn.name), launch, facts_key, called, callees

    def _function_findings(self, src: Source, fn: Function, by_name: dict[str, Function],
                           facts: FileFacts, called: set[str], ctx: Context) -> list[Finding]:
        """Every rule's findings for one function; the rules that read the SIMT trace run only
        for kernels and the device functions no kernel calls (the others are analyzed per
        thread inside their callers)."""
        out: list[Finding] = []
        for rule in registry.RULES:
            if not rule.needs_trace:
                out += _guarded(rule, ctx)
        if (fn.is_kernel or fn.name not in called) and any(rule.needs_trace for rule in registry.RULES):
            try:
                ctx.trace = run_function(fn, by_name, facts, dict(ctx.launch.values))
            except RecursionError:
                log.info("thread analysis of %s: input nested too deeply", fn.name)
                return out
            except Exception:
                log.warning("thread analysis of %s failed", fn.name, exc_info=True)
                return out
            for rule in registry.RULES:
                if rule.needs_trace:
                    out += _guarded(rule, ctx)
        return out


def _facts_key(facts: FileFacts) -> str:
    return hashlib.blake2b(repr((sorted(facts.constants.items()), sorted(facts.structs.items()),
                                 facts.stated_elements)).encode(), digest_size=16).hexdigest()


def _view(facts: FileFacts, facts_key: str, fn: Function) -> tuple[FileFacts, tuple]:
    """The file's facts where `fn` stands, and their cache key."""
    view = facts.at(fn.node.start_byte, fn.code)
    return view, (facts_key, view.scope)


def _guarded(rule: Rule, ctx: Context) -> list[Finding]:
    """One rule's findings; a rule that fails on odd input is skipped (and logged)."""
    try:
        return rule.check(ctx)
    except RecursionError:       # expressions nested hundreds deep: skipped, a known limit
        log.info("%s: input nested too deeply", rule.name)
        return []
    except Exception:
        log.warning("rule %s failed", rule.name, exc_info=True)
        return []


@dataclass(frozen=True)
class _Outline:
    """What one function contributes to the file's picture: the names it calls and the kernel
    launches it makes. Memoized by the function's text across updates."""
    callees: tuple[str, ...]
    launches: tuple[LaunchSite, ...]
    constant_calls: tuple[tuple[str, tuple[int | None, ...]], ...]   # host functions only


def _outline(fn: Function, found: dict[str, list], constants: dict[str, int]) -> _Outline:
    names: list[str] = []
    for call in found.get("call", ()):
        name = text(call.child_by_field_id(FIELD.function)).split("::")[-1]
        if name not in names:
            names.append(name)
    launches = tuple(launch_sites(found, constants, fn.node.start_byte)) if b"<<<" in fn.code else ()
    host = not (fn.is_kernel or fn.is_device)
    return _Outline(tuple(names), launches, constant_calls(found, constants) if host else ())


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
    return Point(*byte_point(data, offset))
