"""Run the DICE benchmark suite on this machine's GPU (the same as `dice bench`):

    python benchmarks/run_bench.py [--out benchmarks] [--cases relu,softmax] [--torch-compile] [--engine]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dice_engine.bench.command import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
