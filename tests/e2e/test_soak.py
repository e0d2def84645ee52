"""The soak's short form (see soak.py): 2,000 random edits against a real `dice-lsp`. About 80 s
on a calm 2-core machine; the bound is 4 minutes, so that a busy machine slows the run instead of
cutting it short of the 2,000 edits the issue asks for. `benchmarks/lsp_soak.py` runs the long
form and writes its figures."""
from __future__ import annotations

from pathlib import Path

from .editor import needs_nvcc
from .soak import run_soak


@needs_nvcc
async def test_soak_never_touches_text_outside_regions_nor_publishes_invalid_positions(tmp_path: Path):
    figures = await run_soak(tmp_path, edits=2000, seed=19, time_limit_s=240)
    print(figures.to_json())
    assert figures.edits >= 2000, figures.to_json()
    assert figures.generates >= 15 and figures.saves >= 30 and figures.cancelled >= 10
    assert figures.server_edits > 0 and figures.publishes > 0 and figures.diagnostics > 0
    assert figures.bytes_outside_regions == 0, figures.notes
    assert figures.invalid_positions == 0, figures.notes
    assert figures.errors == 0, figures.notes
