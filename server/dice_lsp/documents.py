"""Per-document state: the analyzer (parse tree and incremental cache), the intents and
regions found in the text, the latest findings of each kind with the version they describe,
compiler resources, the figures of the last generation of each region and of the last GPU check
on save."""
from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

from pygls.uris import to_fs_path
from tree_sitter import Tree

from dice_engine.analysis import Analyzer, merge
from dice_engine.analysis.budget import over_budget
from dice_engine.analysis.findings import Finding
from dice_engine.intent import IntentSite

from .outline import EMPTY, Outline, outline
from .pairing import Pairs
from .shift import EditLog


@dataclass
class Findings:
    """Findings of one kind and the document version they were computed for."""
    version: int | None = None
    items: list[Finding] = field(default_factory=list)


@dataclass
class DocumentState:
    uri: str
    path: str
    analyzer: Analyzer
    analyzer_lock: threading.Lock = field(default_factory=threading.Lock)  # Analyzer is not re-entrant
    static_task: asyncio.Task | None = None      # the running static pass (see diagnostics.request_static)
    static_dirty: bool = False                   # the text changed since that pass took its snapshot
    sites: list[IntentSite] = field(default_factory=list)
    sites_version: int | None = None
    # The intents the running static pass found, set from its thread as soon as it has them
    # (one tuple assignment), so requests need not find them again while it checks them.
    found_sites: tuple[int | None, list[IntentSite]] = (None, [])
    static: Findings = field(default_factory=Findings)
    compiler: Findings = field(default_factory=Findings)
    notes: Findings = field(default_factory=Findings)            # regions left alone on save
    dynamic: Findings = field(default_factory=Findings)          # sanitizer/profiler (GPU check on save)
    resources: dict[str, Any] = field(default_factory=dict)     # kernel name -> KernelResources
    resources_arch: str | None = None
    generated: dict[str, dict[str, Any]] = field(default_factory=dict)  # intent hash -> last result figures
    checked: dict[str, dict[str, Any]] = field(default_factory=dict)    # intent hash -> GPU check on save
    edits: EditLog | None = None                 # line edits since open, to move older findings
    pairs: Pairs = field(default_factory=Pairs)  # regions' last intact marker lines
    _outline: tuple[int | None, Outline] | None = None
    _parsed: tuple[int | None, Tree] | None = None   # the static pass's tree of that version

    def keep_tree(self, version: int | None, tree: Tree) -> None:
        """The static pass's parse of `version` (a copy: the analyzer edits its own in place),
        so that an outline asked for that version needs no parse of its own. The outline itself
        is made only when hover or code lens ask: on every keystroke it would double the pass."""
        self._parsed = (version, tree.copy())

    def outline(self, version: int | None, text: str, tree: Tree | None = None) -> Outline:
        """Kernels and launches of `text` (document version `version`), cached per version;
        empty for a text the analysis budget skips. Called off the event loop (a parse, unless
        `tree` or the tree kept for `version` is the parse of `text`)."""
        cached = self._outline
        if cached is None or cached[0] != version:
            parsed = self._parsed
            if tree is None and parsed is not None and parsed[0] == version:
                tree = parsed[1]
            skip = tree is None and over_budget(text) is not None   # with a tree: checked already
            cached = (version, EMPTY if skip else outline(text, tree))
            self._outline = cached
        return cached[1]

    def at(self, version: int | None, findings: Findings) -> list[Finding]:
        """`findings` where their text is in document version `version`: moved through the
        edits since they were computed, those on edited lines withheld (shift.py)."""
        if findings.version == version:
            return findings.items
        if self.edits is None or version is None:
            return []
        return self.edits.moved(findings.items, findings.version)

    def published(self, version: int | None) -> list[Finding]:
        """Static, compiler and GPU-check findings merged, and the on-save notes, all at their
        lines in document version `version`."""
        merged = merge(merge(self.at(version, self.static), self.at(version, self.compiler)),
                       self.at(version, self.dynamic))
        return merged + self.at(version, self.notes)

    def unpaired(self, site: IntentSite) -> bool:
        """Whether the markers of `site`'s region no longer pair up: never write over it. What
        the server saw (pairing.py) wins; without that, the text's own evidence (a generated
        body that ends before the region does: `missing_end`)."""
        region = site.region
        if region is None or not region.edited:
            return False
        lost = self.pairs.lost_end(site, self.edits) if self.edits is not None else None
        return region.missing_end is not None if lost is None else lost

    def site_at_line(self, line: int) -> IntentSite | None:
        for site in self.sites:
            if site.line <= line <= site.end_line:
                return site
            if site.region is not None and site.region.begin_line <= line <= site.region.end_line:
                return site
        return None

    def site_by_hash(self, intent_hash: str) -> IntentSite | None:
        return next((s for s in self.sites if s.hash == intent_hash), None)


class Documents:
    def __init__(self, arch: str) -> None:
        self._states: dict[str, DocumentState] = {}
        self._arch = arch

    def get(self, uri: str) -> DocumentState:
        state = self._states.get(uri)
        if state is None:
            path = to_fs_path(uri) or uri
            state = DocumentState(uri=uri, path=path, analyzer=Analyzer(path, self._arch))
            self._states[uri] = state
        return state

    def set_arch(self, arch: str) -> None:
        """A new target: every analyzer starts over (its cached findings assumed the old one)."""
        if arch != self._arch:
            self._arch = arch
            for state in self._states.values():
                with state.analyzer_lock:
                    state.analyzer = Analyzer(state.path, arch)

    def find(self, uri: str) -> DocumentState | None:
        return self._states.get(uri)

    def close(self, uri: str) -> None:
        self._states.pop(uri, None)

    def uris(self) -> list[str]:
        return list(self._states)
