"""Where each generated region's markers were the last time they certainly belonged together.

A region whose body still hashes to what its begin marker records is intact: its begin and end
markers pair up. Once edited, the text alone cannot always tell a region the user typed into
from one whose `// @dice-end` line was deleted and which now reaches a later, unrelated
`// @dice-end` (the engine catches the case where the generated body is still intact). The
server saw the region intact and every edit since, so it knows where that end marker went: if
the region's end now is not that line, the markers no longer pair up and nothing between them
may be overwritten."""
from __future__ import annotations

from dataclasses import dataclass

from dice_engine.intent import IntentSite

from .shift import EditLog


@dataclass(frozen=True)
class Pair:
    version: int     # the version in which the region was last seen intact
    begin: int       # its marker lines then
    end: int


class Pairs:
    """The last intact pairing of each region of one document, keyed by nothing: looked up by
    where the begin marker is now."""

    def __init__(self) -> None:
        self._pairs: list[Pair] = []

    def update(self, version: int, sites: list[IntentSite], edits: EditLog) -> None:
        """After a static pass of `version`: intact regions are recorded anew, the records of
        the others are kept while their begin marker line is still known."""
        intact = [Pair(version, s.region.begin_line, s.region.end_line) for s in sites
                  if s.region is not None and not s.region.edited and s.region.body_hash is not None]
        taken = {p.begin for p in intact}
        kept = []
        for pair in self._pairs:
            begin = edits.moved_line(pair.begin, pair.version)
            if begin is not None and begin not in taken:
                kept.append(pair)
                taken.add(begin)
        self._pairs = intact + kept

    def lost_end(self, site: IntentSite, edits: EditLog) -> bool | None:
        """Whether the region of `site` no longer ends where its last intact pairing did; None
        when the server never saw it intact (then only the text can tell)."""
        region = site.region
        if region is None:
            return None
        for pair in self._pairs:
            if edits.moved_line(pair.begin, pair.version) == region.begin_line:
                return edits.moved_line(pair.end, pair.version) != region.end_line
        return None
