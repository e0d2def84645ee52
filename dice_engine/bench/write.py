"""Write a suite's rows, with the machine they ran on, as RESULTS.md and results.json."""
from __future__ import annotations

import datetime
from pathlib import Path

from ..runner import GpuRunner
from .report import to_json, to_markdown
from .suite import BenchRow


def write_results(rows: list[BenchRow], runner: GpuRunner, out_dir: str | Path) -> tuple[Path, Path]:
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = "not installed"
    gpu = runner.gpu
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "gpu": gpu.get("gpu"), "arch": gpu.get("arch"), "driver": gpu.get("driver"),
            "torch": torch_version,
            "trials": runner.trials, "timed_runs": runner.timed_runs, "runner": runner.stats(),
            "ceilings_obj": runner.ceilings()}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "RESULTS.md", out / "results.json"
    md.write_text(to_markdown(rows, meta))
    js.write_text(to_json(rows, meta))
    return md, js
