"""The denoiser dataset: one JSON object per line, one line per measured design point.

    {"v": 1, "seed", "shape_id", "family", "split", "intent", "target", "gpu", "kernel_name",
     "sketch", "tokens", "round", "status", "time_us", "cost_us", "reference_time_us",
     "max_rel_err", "resources", "detail"}

status is "ok" (verified on the GPU, `time_us` its median time), or why not: a runner verdict
(mismatch, fault, timeout, ...), "compile-error", "render-error" or "cannot-launch" (the cost
model found it cannot launch; not run). `resources` holds ptxas's figures per kernel, keyed by
the kernel's name with `kernel_name` (the name it was rendered under) taken off its front, so a
replay can render the point under any name. Helpers here read it for train.py and evaluate.py.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1


def point_key(tokens: dict[str, Any]) -> str:
    """A point as a canonical string (the same point, the same key)."""
    return json.dumps(tokens, sort_keys=True)


class DatasetError(Exception):
    """A dataset file that cannot be read; the message is one line."""


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every record of `path`; a torn last line (a collection cut short) is skipped."""
    if not path.is_file():
        raise DatasetError(f"no dataset at {path}")
    records = []
    lines = path.read_text().splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                break
            raise DatasetError(f"{path}:{number}: not a JSON line") from None
        if record.get("v") != FORMAT_VERSION:
            raise DatasetError(f"{path}:{number}: format version {record.get('v')!r}, "
                               f"expected {FORMAT_VERSION}")
        records.append(record)
    return records


@dataclass
class Shape:
    """Every measurement of one problem."""
    shape_id: str
    family: str
    split: str
    intent: str
    target: str
    kernel_name: str
    records: list[dict[str, Any]] = field(default_factory=list)

    def ok(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["status"] == "ok" and r["time_us"]]

    def best_us(self, sketch: str | None = None) -> float:
        """The fastest verified time (of `sketch`, or of any sketch); inf when none."""
        times = [r["time_us"] for r in self.ok() if sketch is None or r["sketch"] == sketch]
        return min(times, default=math.inf)

    def table(self) -> dict[tuple[str, str], dict[str, Any]]:
        """(sketch, point key) → its record (the last one where a point was measured twice)."""
        return {(r["sketch"], point_key(r["tokens"])): r for r in self.records}


def shapes(records: list[dict[str, Any]]) -> list[Shape]:
    """The records grouped per problem, in the order problems first appear."""
    grouped: dict[str, Shape] = {}
    for r in records:
        shape = grouped.get(r["shape_id"])
        if shape is None:
            shape = grouped[r["shape_id"]] = Shape(r["shape_id"], r["family"], r["split"], r["intent"],
                                                   r["target"], r["kernel_name"])
        shape.records.append(r)
    return list(grouped.values())


def by_sketch(shape: Shape) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in shape.records:
        out[r["sketch"]].append(r)
    return dict(out)
