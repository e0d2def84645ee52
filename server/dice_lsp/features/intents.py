"""Intent diagnostics: the engine's (`dice_engine.intent_findings`), the same the command line
reports; the save-time note on hand-edited regions and the lost-@dice-end findings, judged with
what the server last saw (`pairing.py`), are built there too."""
from __future__ import annotations

from dice_engine.intent_findings import (edited_region_note, intent_findings, lost_end_finding,
                                         pairing_findings, still_true)

__all__ = ["edited_region_note", "intent_findings", "lost_end_finding", "pairing_findings", "still_true"]
