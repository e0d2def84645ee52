"""A candidate prepared for one run under a whole-process tool (compute-sanitizer, ncu): its
library built so that -lineinfo names a real file holding the region's text, and a request file
for `python -m dice_engine.runner.child --once`."""
from __future__ import annotations

import pickle
import sys
from dataclasses import dataclass
from pathlib import Path

from ..ir.patterns import Problem
from ..sketches.base import RenderedKernel
from .build import build_library, launcher_symbol
from .inputs import shapes_to_check
from .protocol import RunRequest


@dataclass
class OneShot:
    argv: list[str]          # the child command to wrap
    source_path: Path        # the file -lineinfo points at (the region's text, line for line)
    reply_path: Path


class BuildFailed(Exception):
    pass


def prepare(rendered: RenderedKernel, problem: Problem, arch: str, workdir: Path, *,
            shapes: list[dict[str, int]] | None = None, device: int = 0) -> OneShot:
    """Build `rendered` and write the request; one trial at the first shape, no timing, no guard
    zones (they would hide overruns from memcheck)."""
    source_path = workdir / "region.cu"
    source_path.write_text(rendered.source)
    # `#line` makes the debug line table name source_path, line for line with the region.
    built = build_library(f'#line 1 "{source_path}"\n{rendered.source}', rendered.compile_arch(arch))
    if built.library is None:
        raise BuildFailed(built.error)
    request = RunRequest(library=str(built.library), symbol=launcher_symbol(rendered),
                         roles=[p.role for p in rendered.params], names=[p.name for p in rendered.params],
                         problem=problem, shapes=(shapes or shapes_to_check(problem.program))[:1],
                         trials=1, seed=1, time=False, guards=False)
    request_path, reply_path = workdir / "request.pkl", workdir / "reply.pkl"
    request_path.write_bytes(pickle.dumps(request))
    argv = [sys.executable, "-m", "dice_engine.runner.child", "--device", str(device),
            "--once", str(request_path), "--reply", str(reply_path)]
    return OneShot(argv, source_path, reply_path)


def reduced_shapes(problem: Problem, limit: int = 128) -> list[dict[str, int]] | None:
    """Symbol bindings small enough for racecheck (a block or two); None without symbols."""
    first = shapes_to_check(problem.program)[0]
    return [{s: min(v, limit) for s, v in first.items()}] if first else None
