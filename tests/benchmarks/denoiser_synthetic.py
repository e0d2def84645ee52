"""A tiny synthetic denoiser dataset with a planted rule, for the pipeline's tests: elementwise
maps over n elements where the fastest `vec` is 4 from 2^18 elements on and 1 below, the
fastest `schedule` grid_stride from 2^22 on; the other tokens only add small, seeded noise."""
from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "denoiser"))

from dataset import FORMAT_VERSION  # noqa: E402

from dice_engine.arch import resolve  # noqa: E402
from dice_engine.intent import default_kernel_name, parse_intent  # noqa: E402
from dice_engine.ir.patterns import classify  # noqa: E402
from dice_engine.sketches.registry import FAMILIES  # noqa: E402

SKETCH = next(s for s in FAMILIES["elementwise"].sketches if s.name == "elementwise.fused")
TARGET = "H200"


def planted_vec(n: int) -> int:
    return 4 if n >= 1 << 18 else 1


def planted_schedule(n: int) -> str:
    return "grid_stride" if n >= 1 << 22 else "one_shot"


def synthetic_time(n: int, point: dict[str, Any], rng: random.Random) -> float:
    t = n / 1e3
    t *= 1.0 if point["vec"] == planted_vec(n) else 1.6
    t *= 1.0 if point["schedule"] == planted_schedule(n) else 1.3
    return t * (1 + 0.05 * rng.random())


def records(sizes: list[int], heldout: set[int], seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    arch = resolve(TARGET)
    out = []
    for i, n in enumerate(sizes):
        intent = f"y = relu(x); x: f32[{n}]"
        program = parse_intent(intent)
        problem = classify(program)
        for point in SKETCH.space(problem, arch).points():
            out.append({"v": FORMAT_VERSION, "seed": seed, "shape_id": f"elementwise-{i:03d}",
                        "family": "elementwise", "split": "heldout-shape" if n in heldout else "train",
                        "intent": intent, "target": TARGET, "gpu": "synthetic",
                        "kernel_name": default_kernel_name(program), "sketch": SKETCH.name, "tokens": point,
                        "round": 0, "status": "ok", "time_us": synthetic_time(n, point, rng), "cost_us": None,
                        "reference_time_us": None, "max_rel_err": 0.0, "resources": {}, "detail": ""})
    return out
