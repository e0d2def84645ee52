"""Search efficiency on held-out problems, replayed from the collected measurements (no GPU).

    python benchmarks/denoiser/evaluate.py [--data benchmarks/denoiser/data/measurements.jsonl]
        [--weights dice_engine/refine/weights/denoiser.npz] [--out benchmarks/denoiser/EVALUATION.md]
        [--seeds 3] [--min-points 32]

For every held-out problem with at least --min-points verified designs, the DICE search runs as
it does with a GPU (refine/loop.py: rounds, blame, noise schedule, patience), but every
candidate's compile result (ptxas figures) and measurement come from the dataset, and the design
space is cut down to the measured points. Per problem and N = 1, 4, 8, 16, 24 evaluations, the
score is the fraction of the best measured design's speed that the best of the first N
evaluations reaches (0 before any verified one): for the learned denoiser, the heuristic prior
(each over --seeds seeds, averaged) and random sampling (the exact expectation of drawing N
measured points without replacement). Also the no-GPU choice: the search ranked by the cost
model alone (budget 24), its pick's measured speed. Median and quartiles over problems go to a
Markdown table.

Where a problem's space is only partly measured, a proposal of an unmeasured point is refused
like an illegal one (the denoiser is asked again, at a higher temperature), for every prior
alike: the learned denoiser still steers by the sketch's whole space, as in a real search, not
by the measured points. Sparse coverage makes every curve climb slower; the table gives it.
"""
from __future__ import annotations

import argparse
import math
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE)]

from dataset import DatasetError, Shape, point_key, read_records, shapes  # noqa: E402

from dice_engine.arch import ArchSpec, resolve  # noqa: E402
from dice_engine.compile import CompileMessage, CompileResult, KernelResources  # noqa: E402
from dice_engine.intent import IntentError, parse_intent  # noqa: E402
from dice_engine.ir.patterns import Problem, classify  # noqa: E402
from dice_engine.refine import Denoiser, HeuristicPrior, Search  # noqa: E402
from dice_engine.refine.denoiser_model import WEIGHTS_PATH, load  # noqa: E402
from dice_engine.refine.learned import LearnedDenoiser  # noqa: E402
from dice_engine.runner.report import VERDICTS, RunReport  # noqa: E402
from dice_engine.sketches.base import DesignSpace, Point, RenderedKernel  # noqa: E402
from dice_engine.sketches.registry import candidates  # noqa: E402

NS = (1, 4, 8, 16, 24)
WITHIN = 1 / 1.05          # "within 5% of the best": at least this fraction of its speed


# -- the curves --------------------------------------------------------------------------------

def fraction_curve(best_us: float, found_us: Sequence[float | None], ns: Sequence[int] = NS) -> list[float]:
    """Per N: best_us over the fastest verified time among the first N evaluations (None: not
    verified); 0 when none is verified yet. A search that stopped early keeps its last value."""
    out = []
    for n in ns:
        times = [t for t in found_us[:n] if t is not None]
        out.append(best_us / min(times) if times else 0.0)
    return out


def random_curve(times_us: Sequence[float | None], ns: Sequence[int] = NS) -> list[float]:
    """Per N: the expected fraction of the best that N points drawn uniformly without
    replacement from `times_us` reach (None: a point that failed, worth 0)."""
    verified = sorted(t for t in times_us if t is not None)
    if not verified:
        return [0.0 for _ in ns]
    best, total = verified[0], len(times_us)
    out = []
    for n in ns:
        n = min(n, total)
        # P(the fastest drawn is the i-th fastest) = C(total-1-i, n-1) / C(total, n), i from 0
        expected = sum(math.comb(total - 1 - i, n - 1) * best / t for i, t in enumerate(verified))
        out.append(expected / math.comb(total, n))
    return out


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    q1, median, q3 = np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
    return float(q1), float(median), float(q3)


# -- the replay --------------------------------------------------------------------------------

@dataclass
class MeasuredSpace(DesignSpace):
    """A sketch's space cut down to the measured points; `full` is the space it was cut from."""
    full: DesignSpace | None = None


class ReplayLearned(LearnedDenoiser):
    """The learned denoiser steering by the sketch's whole space, as it does in a real search."""

    def _legal_points(self, space: DesignSpace) -> list[Point] | None:
        full = space.full if isinstance(space, MeasuredSpace) and space.full is not None else space
        return super()._legal_points(full)


class Replay:
    """One problem's measurements, served to the search as compiles and runs."""

    def __init__(self, shape: Shape):
        self.shape = shape
        self.table = shape.table()
        program = parse_intent(shape.intent)
        self.problem: Problem = classify(program)
        self.arch: ArchSpec = resolve(shape.target)
        measured = {sketch for sketch, _ in self.table}
        self.sketches = [s for s in candidates(self.problem, self.arch) if s.name in measured]
        self.best_us = shape.best_us()

    def _record(self, rendered: RenderedKernel) -> dict[str, Any]:
        return self.table[(rendered.sketch, point_key(rendered.tokens))]

    def compile(self, rendered: RenderedKernel, arch: ArchSpec) -> CompileResult:
        r = self._record(rendered)
        if r["status"] in ("compile-error", "render-error"):
            return CompileResult(False, [CompileMessage("kernel.cu", 0, 0, "error", r["detail"] or "failed")])
        name = self.shape.kernel_name
        return CompileResult(True, resources={name + suffix: KernelResources(**v)
                                              for suffix, v in r["resources"].items()})

    def evaluate(self, rendered: RenderedKernel, problem: Problem, arch: ArchSpec) -> RunReport:
        r = self._record(rendered)
        if r["status"] == "ok":
            return RunReport(True, "ok", time_us=r["time_us"])
        verdict = r["status"] if r["status"] in VERDICTS else "launch-failure"
        return RunReport(False, verdict, detail=r["detail"])

    def _measured_only(self, sketch: str) -> Callable[[dict[str, Any]], str | None]:
        return lambda p: None if (sketch, point_key(p)) in self.table else "not measured"

    def search(self, denoiser: Denoiser, seed: int, budget: int, gpu: bool) -> Search:
        search = Search(self.problem, self.arch, self.sketches, self.shape.kernel_name, budget=budget,
                        seed=seed, runner=self if gpu else None, denoiser=denoiser, compiler=self.compile,
                        cancel=threading.Event())
        for arm in search.arms:
            arm.space = MeasuredSpace(list(arm.space.tokens),
                                      [*arm.space.constraints, self._measured_only(arm.sketch.name)],
                                      full=arm.space)
        return search

    def tuned(self, denoiser: Denoiser, seed: int, budget: int = max(NS)) -> list[float | None]:
        """The measured time of each evaluation of a GPU-tuned search, in order."""
        search = self.search(denoiser, seed, budget, gpu=True)
        for _ in search.run():
            pass
        return [e.time_us if e.status == "ok" else None for e in search.history]

    def no_gpu_pick(self, denoiser: Denoiser, seed: int, budget: int = max(NS)) -> float:
        """The fraction of the best that the cost model's choice reaches."""
        search = self.search(denoiser, seed, budget, gpu=False)
        for _ in search.run():
            pass
        if search.best is None:
            return 0.0
        r = self.table[(search.best.sketch, point_key(search.best.tokens))]
        return self.best_us / r["time_us"] if r["status"] == "ok" and r["time_us"] else 0.0

    def coverage(self) -> float:
        """Measured points over legal points of the measured sketches."""
        legal = sum(sum(1 for _ in s.space(self.problem, self.arch).points()) for s in self.sketches)
        return len(self.table) / legal if legal else 0.0


# -- the table ---------------------------------------------------------------------------------

def evaluate(data: list[Shape], priors: dict[str, Callable[[], Denoiser]], seeds: int,
             min_points: int) -> dict[str, Any]:
    """Curves per method per held-out problem, and the no-GPU fractions."""
    rows: dict[str, list[list[float]]] = {name: [] for name in [*priors, "random"]}
    no_gpu: dict[str, list[float]] = {name: [] for name in priors}
    used, skipped, coverage, splits, families = [], [], [], [], []
    for shape in data:
        if shape.split == "train":
            continue
        if len(shape.ok()) < min_points:
            skipped.append(shape.shape_id)
            continue
        try:
            replay = Replay(shape)
        except (IntentError, KeyError) as e:
            skipped.append(f"{shape.shape_id} ({e})")
            continue
        used.append(shape.shape_id)
        splits.append(shape.split)
        families.append(shape.family)
        coverage.append(replay.coverage())
        rows["random"].append(random_curve([r["time_us"] if r["status"] == "ok" else None
                                            for r in replay.table.values()]))
        for name, make in priors.items():
            curves = [fraction_curve(replay.best_us, replay.tuned(make(), seed)) for seed in range(seeds)]
            rows[name].append(list(np.mean(curves, axis=0)))
            no_gpu[name].append(replay.no_gpu_pick(make(), 0))
    return {"curves": rows, "no_gpu": no_gpu, "used": used, "skipped": skipped, "coverage": coverage,
            "splits": splits, "families": families}


def _cell(values: Sequence[float]) -> str:
    if not values:
        return "—"
    q1, median, q3 = quartiles(values)
    return f"{median:.2f} ({q1:.2f}–{q3:.2f})"


def markdown(result: dict[str, Any], title: str, ns: Sequence[int] = NS) -> str:
    used, splits = result["used"], result["splits"]
    lines = [f"# {title}", "",
             f"{len(used)} held-out problems ({splits.count('heldout-shape')} held-out shapes, "
             f"{splits.count('heldout-range')} from the held-out size range); "
             f"{len(result['skipped'])} skipped "
             f"(too few verified designs). Coverage (measured / legal points): median "
             f"{np.median(result['coverage']) if result['coverage'] else 0:.2f}.", "",
             "Fraction of the best measured design's speed reached within N evaluations: median "
             "(quartiles) over problems.", "",
             "| prior | " + " | ".join(f"N={n}" for n in ns) + " |",
             "| --- |" + " --- |" * len(ns)]
    for name, curves in result["curves"].items():
        cells = [_cell([c[i] for c in curves]) for i in range(len(ns))]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for split in ("heldout-shape", "heldout-range"):
        picked = [i for i, s in enumerate(splits) if s == split]
        if not picked:
            continue
        lines += ["", f"{split} only ({len(picked)} problems):", "",
                  "| prior | " + " | ".join(f"N={n}" for n in ns) + " |", "| --- |" + " --- |" * len(ns)]
        for name, curves in result["curves"].items():
            cells = [_cell([curves[i][j] for i in picked]) for j in range(len(ns))]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += _per_family(result, ns)
    lines += ["", "No-GPU choice (the cost model ranks a budget-24 search; its pick's measured speed):", "",
              "| prior | median (quartiles) | within 5% of the best |", "| --- | --- | --- |"]
    for name, fractions in result["no_gpu"].items():
        share = sum(f >= WITHIN for f in fractions) / len(fractions) if fractions else 0.0
        lines.append(f"| {name} | {_cell(fractions)} | {share:.0%} |")
    return "\n".join(lines) + "\n"


def _per_family(result: dict[str, Any], ns: Sequence[int]) -> list[str]:
    """Medians per problem family at N=1 and N=8 (or the first and the middle N given)."""
    families = result.get("families") or []
    if not families:
        return []
    first, middle = 0, min(2, len(ns) - 1)
    names = list(result["curves"])
    lines = ["", f"Per family, median at N={ns[first]} / N={ns[middle]}:", "",
             "| family | problems | " + " | ".join(names) + " |", "| --- | --- |" + " --- |" * len(names)]
    for family in sorted(set(families)):
        picked = [i for i, f in enumerate(families) if f == family]
        cells = []
        for name in names:
            curves = [result["curves"][name][i] for i in picked]
            medians = [np.median([c[at] for c in curves]) for at in (first, middle)]
            cells.append(f"{medians[0]:.2f} / {medians[1]:.2f}")
        lines.append(f"| {family} | {len(picked)} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evaluate.py", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / "data" / "measurements.jsonl")
    parser.add_argument("--weights", type=Path, default=WEIGHTS_PATH)
    parser.add_argument("--out", type=Path, default=HERE / "EVALUATION.md")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--min-points", type=int, default=32, help="verified designs a problem needs")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.min_points < 1:
        print("evaluate.py: --seeds and --min-points must be positive", file=sys.stderr)
        return 2
    try:
        data = shapes(read_records(args.data))
    except DatasetError as e:
        print(f"evaluate.py: {e}", file=sys.stderr)
        return 1
    net, why = load(args.weights)
    priors: dict[str, Callable[[], Denoiser]] = {"heuristic": HeuristicPrior}
    if net is not None:
        priors = {"learned": lambda: ReplayLearned(net), **priors}
    else:
        print(f"evaluate.py: {why}; evaluating the heuristic prior and random sampling only", file=sys.stderr)
    result = evaluate(data, priors, args.seeds, args.min_points)
    if not result["used"]:
        print(f"evaluate.py: no held-out problem of {args.data} has {args.min_points} verified designs",
              file=sys.stderr)
        return 1
    gpus = sorted({r["gpu"] for s in data for r in s.records})
    text = markdown(result, f"Denoiser search efficiency ({', '.join(gpus)}; {args.data.name})")
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
