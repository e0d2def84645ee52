"""Codes of the findings that come from running a kernel (compute-sanitizer, Nsight Compute).

They follow `dice_engine.analysis.codes.CODES`' form; that table holds the static and compiler
codes, these are the dynamic ones (D-series)."""
from __future__ import annotations

from ..analysis.codes import CodeInfo

DYNAMIC_CODES: dict[str, CodeInfo] = {
    "DICE-D001": CodeInfo("overflow", "error", "Out-of-bounds or misaligned memory access (memcheck)"),
    "DICE-D002": CodeInfo("race", "error", "Data race hazard (racecheck)"),
    "DICE-D003": CodeInfo("sync", "error", "Barrier error (synccheck)"),
    "DICE-D004": CodeInfo("race", "warning", "Read of device memory nothing wrote (initcheck)"),
    "DICE-D005": CodeInfo("race", "information", "Racecheck skipped: the grid is too large"),
    "DICE-D010": CodeInfo("coalescing", "warning", "Measured uncoalesced global access"),
    "DICE-D011": CodeInfo("bank-conflict", "warning", "Measured shared-memory bank conflicts"),
    "DICE-D012": CodeInfo("performance", "information", "Measured kernel throughput and occupancy"),
}
