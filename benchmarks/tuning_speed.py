"""How long GPU-tuned `dice generate` takes at KernelBench level-1 sizes, and where the time goes.

    python benchmarks/tuning_speed.py [--budget 24] [--cases gemm_4096,relu_4096x393216]
                                      [--out results.json] [--markdown TUNING_SPEED.md]
                                      [--passes 2] [--limit-s 120]

Each case does what `dice generate "<intent>" --budget N` does on a GPU machine: a fresh runner
pool (child start-up and CUDA initialisation included), the DICE search with every candidate
compiled, verified (5 trials on fresh inputs, every element) and timed, then the pool closed.
The first pass of a case starts from an empty compile cache, as a user's first run does; later
passes (`--passes`, default 2) find its compiles cached, as a repeated run does. The machine's
ceilings are measured once beforehand, as they are cached on disk after a user's first run.

Per case it prints and writes the wall time and its split:
  startup     runner pool start until the child answers (CUDA context, imports)
  compile     wall time during which at least one nvcc was running (the runner's library builds,
              whose ptxas figures also serve the search, and the search's own compiles where
              the target is not the GPU's arch; they overlap GPU work, so the split need not add up)
  nvcc        nvcc seconds summed over the parallel compiles
  inputs      drawing the trials' inputs (in the runner child)
  reference   evaluating the reference of each trial (or finding it kept from a candidate before)
  check       candidate launches and the output comparison
  runs        the timed runs of each candidate, and PyTorch's reference timed once per program
  transfer    request/reply between the search and the child
Shapes are KernelBench level 1's where DICE serves them (its LayerNorm normalises three
dimensions, which DICE does not: a one-dimension layer norm of similar size stands in).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dice_engine.api import CUDAGenerator  # noqa: E402
from dice_engine.arch import resolve  # noqa: E402
from dice_engine.refine import loop as search_loop  # noqa: E402
from dice_engine.runner import GpuRunner  # noqa: E402
from dice_engine.runner import build as runner_build  # noqa: E402

CASES: dict[str, str] = {
    "gemm_4096": "C = A @ B; A: f32[4096, 4096]; B: f32[4096, 4096]",
    "gemm_8205x2949x5921": "C = A @ B; A: f32[8205, 2949]; B: f32[2949, 5921]",
    "relu_4096x393216": "y = relu(x); x: f32[4096, 393216]",
    "softmax_4096x393216": "y = softmax(x, dim=1); x: f32[4096, 393216]",
    "sum_dim1_128x4096x4095": "s = sum(x, dim=1); x: f32[128, 4096, 4095]",
    "argmax_dim1_128x4096x4095": "i = argmax(x, dim=1); x: f32[128, 4096, 4095]",
    "layer_norm_16384x8192":
        "y = layer_norm(x, [8192], w, b); x: f32[16384, 8192]; w: f32[8192]; b: f32[8192]",
    "gemm_batched_128x512x1024x2048": "C = A @ B; A: f32[128, 512, 1024]; B: f32[128, 1024, 2048]",
}
DEFAULT_CASES = ["gemm_4096", "gemm_8205x2949x5921", "relu_4096x393216", "softmax_4096x393216",
                 "sum_dim1_128x4096x4095", "layer_norm_16384x8192"]
CHILD_STAGES = ("inputs", "reference", "launch", "check", "runs", "reference runs", "transfer", "build")


@dataclass
class Row:
    case: str
    intent: str
    compile_cache: str = "empty"     # "empty" (first pass) or "filled" (later passes)
    total_s: float = math.nan
    startup_s: float = math.nan
    compile_wall_s: float = math.nan
    nvcc_s: float = math.nan
    stages_s: dict[str, float] = field(default_factory=dict)
    candidates: int = 0
    restarts: int = 0
    sketch: str = ""
    tokens: dict[str, Any] = field(default_factory=dict)
    time_us: float | None = None
    reference_time_us: float | None = None
    verified: bool | None = None
    note: str = ""


class Intervals:
    """Wall-clock intervals of calls made from several threads (to measure their union)."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.monotonic()
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self.spans.append((started, time.monotonic()))
        return timed

    def summed(self) -> float:
        return sum(end - start for start, end in self.spans)

    def union(self) -> float:
        total, reach = 0.0, -math.inf
        for start, end in sorted(self.spans):
            if end > reach:
                total += end - max(start, reach)
                reach = end
        return total


@contextmanager
def _timing_nvcc(intervals: Intervals) -> Iterator[None]:
    """Every nvcc call of the search and of the runner's builds recorded in `intervals`."""
    originals = {module: module.compile_cuda for module in (search_loop, runner_build)}
    for module, compile_cuda in originals.items():
        module.compile_cuda = intervals.wrap(compile_cuda)
    try:
        yield
    finally:
        for module, compile_cuda in originals.items():
            module.compile_cuda = compile_cuda


def run_case(name: str, intent: str, arch: str, budget: int, limit_s: float,
             make_runner: Callable[[], GpuRunner] = GpuRunner, compile_cache: str = "empty") -> Row:
    row = Row(name, intent, compile_cache)
    started = time.monotonic()
    runner = make_runner()
    try:
        if not runner.available():
            row.note = "no GPU runner"
            return row
        row.startup_s = time.monotonic() - started
        generator = CUDAGenerator(arch, budget=budget, seed=0, default_shape=None, runner=runner)
        program, _ = generator.parse(intent)
        search = generator.search_for(program, threading.Event())
        nvcc = Intervals()
        stop = threading.Timer(limit_s, search.cancel.set)
        stop.start()
        best = None
        try:
            with _timing_nvcc(nvcc):
                for found in search.run():
                    best = found
        finally:
            stop.cancel()
        if search.cancel.is_set():
            row.note = f"stopped at the {limit_s:g} s limit"
        if best is not None:
            row.sketch, row.tokens = best.rendered.sketch, dict(best.rendered.tokens)
            row.verified, row.time_us = best.evaluation.verified, best.evaluation.time_us
            row.reference_time_us = best.run.reference_time_us if best.run else None
        elif not row.note:
            first = search.history[0] if search.history else None
            row.note = f"no kernel: {first.status}: {first.detail[:200]}" if first else "no kernel"
        row.compile_wall_s, row.nvcc_s = nvcc.union(), nvcc.summed()
        stats = runner.stats()
        row.stages_s = {k: round(v, 3) for k, v in stats["stages_s"].items()}
        row.candidates, row.restarts = stats["candidates"], stats["restarts"]
    finally:
        runner.close()
        row.total_s = time.monotonic() - started
    return row


def _cell(value: float) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.1f}"


def table(rows: list[Row], gpu: str, budget: int) -> str:
    head = ("| case | compile cache | total s | startup | compile (wall) | nvcc (sum) | inputs | reference | "
            "check | runs | transfer | candidates | best | PyTorch | note |")
    lines = [f"GPU-tuned `dice generate` at budget {budget} on {gpu}, seconds per stage.", "", head,
             "|" + " --- |" * (head.count("|") - 1)]
    for r in rows:
        s = r.stages_s
        runs = s.get("runs", 0.0) + s.get("reference runs", 0.0)
        check = s.get("launch", 0.0) + s.get("check", 0.0)
        best = f"{r.sketch} {r.time_us:.1f} us" if r.time_us else r.sketch
        torch_us = f"{r.reference_time_us:.1f} us" if r.reference_time_us else "—"
        lines.append(f"| {r.case} | {r.compile_cache} | {_cell(r.total_s)} | {_cell(r.startup_s)} | "
                     f"{_cell(r.compile_wall_s)} | {_cell(r.nvcc_s)} | {_cell(s.get('inputs', math.nan))} | "
                     f"{_cell(s.get('reference', math.nan))} | {_cell(check)} | {_cell(runs)} | "
                     f"{_cell(s.get('transfer', math.nan))} | {r.candidates} | {best} | {torch_us} | "
                     f"{r.note} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tuning_speed.py", description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=24)
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES),
                        help=f"comma-separated, from: {', '.join(CASES)} (or 'all')")
    parser.add_argument("--arch", default=None, help="generation target (default: the GPU's own)")
    parser.add_argument("--out", default="benchmarks/tuning_speed.json")
    parser.add_argument("--markdown", default=None, help="also write the table here")
    parser.add_argument("--passes", type=int, default=2,
                        help="per case: the first from an empty compile cache, later ones with it filled")
    parser.add_argument("--limit-s", type=float, default=120.0, help="stop a case's search after this long")
    args = parser.parse_args(argv)
    if args.passes < 1 or args.budget < 1:
        print("tuning_speed.py: --passes and --budget must be at least 1", file=sys.stderr)
        return 2
    names = list(CASES) if args.cases == "all" else [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"tuning_speed.py: unknown case(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    base = Path(os.environ.get("DICE_CACHE_DIR") or tempfile.mkdtemp(prefix="dice-speed-"))
    os.environ["DICE_CACHE_DIR"] = str(base)
    with GpuRunner() as runner:         # the ceilings, measured once (a user's first run caches them)
        if not runner.available():
            print("tuning_speed.py: no GPU runner (needs pycuda, nvcc and an NVIDIA GPU)", file=sys.stderr)
            return 1
        gpu = runner.gpu
        runner.ceilings()
    arch = args.arch or _target(gpu)
    rows = []
    for name in names:
        case_dir = base / f"case-{name}"
        shutil.rmtree(case_dir, ignore_errors=True)
        if (base / "ceilings").is_dir():
            shutil.copytree(base / "ceilings", case_dir / "ceilings", dirs_exist_ok=True)
        os.environ["DICE_CACHE_DIR"] = str(case_dir)
        for run in range(args.passes):
            row = run_case(name, CASES[name], arch, args.budget, args.limit_s,
                           compile_cache="filled" if run else "empty")
            rows.append(row)
            print(f"{name} ({row.compile_cache} compile cache): {row.total_s:.1f} s total, stages "
                  f"{row.stages_s}, compile wall {row.compile_wall_s:.1f} s"
                  f"{', ' + row.note if row.note else ''}", flush=True)
            _write(args, rows, gpu, arch)
    print(table(rows, gpu.get("gpu", "?"), args.budget))
    return 0


def _target(gpu: dict[str, Any]) -> str:
    try:
        resolve(gpu["gpu"])
        return gpu["gpu"]
    except KeyError:
        return gpu["arch"]


def _write(args: argparse.Namespace, rows: list[Row], gpu: dict[str, Any], arch: str) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = {"gpu": gpu, "arch": arch, "budget": args.budget, "rows": [asdict(r) for r in rows]}
    out.write_text(json.dumps(results, indent=1))
    if args.markdown:
        Path(args.markdown).write_text(table(rows, gpu.get("gpu", "?"), args.budget) + "\n")


if __name__ == "__main__":
    sys.exit(main())
