"""The machine's ceilings, measured once by a runner child and cached on disk per GPU."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .metrics import Ceilings


def cache_path(gpu: str, driver: str) -> Path:
    root = os.environ.get("DICE_CACHE_DIR") or str(Path.home() / ".cache" / "dice")
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{gpu}-{driver}").strip("-")
    return Path(root) / "ceilings" / f"{slug}.json"


def load(gpu: str, driver: str) -> Ceilings | None:
    path = cache_path(gpu, driver)
    try:
        data = json.loads(path.read_text())
        rates = {k: float(v) for k, v in data["gemm_tflops"].items()}
        return Ceilings(data["gpu"], float(data["copy_gbps"]), rates)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(ceilings: Ceilings, driver: str) -> None:
    path = cache_path(ceilings.gpu, driver)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"gpu": ceilings.gpu, "copy_gbps": ceilings.copy_gbps,
                               "gemm_tflops": ceilings.gemm_tflops}, indent=1))
    tmp.replace(path)
