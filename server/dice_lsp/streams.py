"""A generation request and its running stream: what the server keeps per (uri, intent hash)
while a generation runs (generation.py runs it)."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Sequence

from dice_engine.intent import IntentSite

from .jobs import CancelScope


@dataclass(frozen=True)
class GenerateRequest:
    """The command's one argument (a JSON object)."""
    uri: str
    hash: str                      # the intent's hash when the action was offered
    arch: str | None = None        # "Tune for <arch>"; None: the dice.arch setting
    force: bool = False            # overwrite a region the user edited by hand

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> "GenerateRequest":
        return cls(uri=raw["uri"], hash=raw["hash"], arch=raw.get("arch"), force=bool(raw.get("force")))

    def to_json(self) -> dict[str, Any]:
        return {"uri": self.uri, "hash": self.hash, "arch": self.arch, "force": self.force}


@dataclass
class Stream:
    request: GenerateRequest
    cancel: CancelScope = field(default_factory=CancelScope)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    written: bool = False          # a kernel of this stream is in the document
    # A forced regeneration's region as it was when the run began (the user's edits it replaces).
    replaces: list[str] | None = None

    def region_is_users(self, site: IntentSite, lines: Sequence[str]) -> bool:
        """Whether the region (of the text `lines`) now holds text the user wrote. A forced
        regeneration may replace the hand-edited region it began with, but not edits made after
        it began or after its first kernel landed."""
        region = site.region
        if region is None or not region.edited:
            return False
        if self.written or not self.request.force:
            return True
        return list(lines[region.begin_line:region.end_line + 1]) != self.replaces
