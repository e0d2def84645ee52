"""Every static rule, in one list: `analyzer` runs each on every function (the rules that read
the SIMT trace only where a thread analysis runs). A new analysis is a module with a `RULE`
(see `rule.Rule`) added here, its codes added to `codes.CODES` with origin "static"."""
from __future__ import annotations

from . import (atomic_total, bank_conflict, bounds, coalescing, launch, overflow, precision, race,
               serial_total, sync)
from .rule import Rule

RULES: tuple[Rule, ...] = (
    sync.RULE,
    race.RULE,
    coalescing.RULE,
    bank_conflict.RULE,
    precision.RULE,
    atomic_total.RULE,
    serial_total.RULE,
    overflow.RULE,
    bounds.RULE,
    launch.RULE,
)
