"""The learned denoiser's pipeline on the CPU: training learns a planted rule, inference keeps
unmasked tokens and stays legal, the fallback, the weights file, evaluate.py's curves and
collect.py's deterministic plan."""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path[:0] = [str(Path(__file__).resolve().parent),
                str(Path(__file__).resolve().parents[2] / "benchmarks" / "denoiser")]

import collect  # noqa: E402
import dataset  # noqa: E402
import denoiser_synthetic as syn  # noqa: E402
import evaluate  # noqa: E402
import problems  # noqa: E402

from dice_engine.api import CUDAGenerator  # noqa: E402
from dice_engine.arch import resolve  # noqa: E402
from dice_engine.intent import parse_intent  # noqa: E402
from dice_engine.ir.patterns import classify  # noqa: E402
from dice_engine.refine import MASK, DenoiseRequest, HeuristicPrior  # noqa: E402
from dice_engine.refine.denoiser_model import DenoiserNet, load  # noqa: E402
from dice_engine.refine.features import FEATURE_NAMES  # noqa: E402
from dice_engine.refine.learned import LearnedDenoiser  # noqa: E402
from dice_engine.refine.priors import make_denoiser  # noqa: E402
from dice_engine.sketches.registry import FAMILIES  # noqa: E402

train = pytest.importorskip("train")       # needs torch (CPU)
pytest.importorskip("torch")

SIZES = [m << k for k in range(10, 27) for m in (1, 3)]
HELDOUT = {3 << 12, 1 << 15, 3 << 19, 1 << 24, 3 << 24}     # away from the planted thresholds
ARCH = resolve(syn.TARGET)


@pytest.fixture(scope="module")
def trained():
    data = dataset.shapes(syn.records(SIZES, HELDOUT))
    items = train.examples(data)
    net = train.fit(train.vocabulary(data), [e for e in items if e.split == "train"], steps=600, hidden=64)
    return net, data, items


def _request(n: int, point: dict, temperature: float = 0.0, anchor: dict | None = None, seed: int = 0,
             sketch=syn.SKETCH, intent: str | None = None) -> DenoiseRequest:
    problem = classify(parse_intent(intent or f"y = relu(x); x: f32[{n}]"))
    space = sketch.space(problem, ARCH)
    full = {t.name: point.get(t.name, MASK) for t in space.tokens}
    return DenoiseRequest(sketch, space, problem, ARCH, full, anchor, random.Random(seed), {}, temperature)


def test_training_learns_the_planted_rule(trained):
    net, _, items = trained
    heldout_best = [e for e in items if e.split != "train" and e.best]
    accuracy = train.token_accuracy(net, heldout_best)
    assert accuracy["vec"] >= 0.8 and accuracy["schedule"] >= 0.8      # chance: 0.5 each
    denoiser = LearnedDenoiser(net)
    for n in sorted(HELDOUT):
        filled = denoiser.fill(_request(n, {}))
        assert (filled["vec"], filled["schedule"]) == (syn.planted_vec(n), syn.planted_schedule(n)), n
    assert denoiser.name == "learned" and denoiser.note() == ""


def test_inference_keeps_unmasked_tokens_and_stays_legal(trained):
    net = trained[0]
    denoiser = LearnedDenoiser(net)
    rng = random.Random(1)
    for i in range(40):
        n = rng.choice(SIZES)
        request = _request(n, {}, seed=i)
        space = request.space
        legal = list(space.points())
        anchor = rng.choice(legal)
        kept = rng.sample([t.name for t in space.tokens], rng.randint(0, len(space.tokens) - 1))
        request = _request(n, {k: anchor[k] for k in kept}, temperature=rng.choice((0.0, 0.5, 2.0)),
                           anchor=anchor, seed=i)
        filled = denoiser.fill(request)
        assert all(filled[k] == anchor[k] for k in kept)
        assert space.is_legal(filled), filled


def test_temperature_widens_the_draws(trained):
    denoiser = LearnedDenoiser(trained[0])
    cold = {json.dumps(denoiser.fill(_request(1 << 24, {}, 0.0, seed=s)), sort_keys=True) for s in range(30)}
    hot = {json.dumps(denoiser.fill(_request(1 << 24, {}, 3.0, seed=s)), sort_keys=True) for s in range(30)}
    assert len(cold) == 1 and len(hot) > 3


def test_falls_back_to_the_heuristic_without_weights_or_for_an_unknown_sketch(trained):
    request = _request(1 << 20, {})
    without = LearnedDenoiser(None, "no weights")
    assert without.fill(request) == HeuristicPrior().fill(_request(1 << 20, {}))
    assert without.name == "heuristic"
    assert without.note() == "prior: the heuristic filled 1 of 1 points (no weights)"
    rows = next(s for s in FAMILIES["reduction"].sketches if s.name == "reduction.rows")
    intent = "s = sum(x, dim=1); x: f32[1024, 4096]"
    denoiser = LearnedDenoiser(trained[0])
    unknown = denoiser.fill(_request(0, {}, sketch=rows, intent=intent))
    assert unknown == HeuristicPrior().fill(_request(0, {}, sketch=rows, intent=intent))
    assert denoiser.name == "heuristic"
    denoiser.fill(request)
    assert denoiser.name == "learned+heuristic"


def test_falls_back_for_a_pattern_or_a_sketch_it_saw_too_little_of(trained):
    net = trained[0]
    learned = LearnedDenoiser(net).fill(_request(1 << 24, {}))
    heuristic = HeuristicPrior().fill(_request(1 << 24, {}))
    assert learned != heuristic          # the planted rule differs from the default point here
    for meta in ({"patterns": ["reduction"]}, {"archs": ["sm_80"]},
                 {"examples_per_sketch": {syn.SKETCH.name: 3}}):
        restricted = DenoiserNet(net.vocab, net.arrays, meta)
        denoiser = LearnedDenoiser(restricted)
        assert denoiser.fill(_request(1 << 24, {})) == heuristic and denoiser.name == "heuristic"


def test_weights_round_trip_and_stale_features_are_refused(trained, tmp_path, monkeypatch):
    net = trained[0]
    path = tmp_path / "w.npz"
    net.save(path)
    loaded, why = load(path)
    assert why == "" and isinstance(loaded, DenoiserNet)
    features = np.zeros(len(FEATURE_NAMES), dtype=np.float32)
    row = net.vocab.encode(features, syn.SKETCH.name, {0: None, 1: 1})
    assert abs(loaded.logits(row[None]) - net.logits(row[None])).max() < 0.05    # float16 storage
    import dice_engine.refine.denoiser_model as model
    monkeypatch.setattr(model, "FEATURE_NAMES", ("something", "else"))
    stale, why = model.load(path)
    assert stale is None and "other problem features" in why
    missing, why = load(tmp_path / "none.npz")
    assert missing is None and "no learned weights" in why


def test_priors_by_name():
    assert isinstance(make_denoiser("heuristic"), HeuristicPrior)
    assert isinstance(make_denoiser("learned"), LearnedDenoiser)
    with pytest.raises(ValueError, match="unknown prior 'best'"):
        make_denoiser("best")
    with pytest.raises(ValueError, match="unknown prior"):
        CUDAGenerator("sm_90", prior="best")
    gen = CUDAGenerator("sm_90", prior="learned", default_shape=None)
    search = gen.search_for(parse_intent("y = relu(x); x: f32[4096]"))
    assert isinstance(search.denoiser, LearnedDenoiser)


# -- evaluate.py ---------------------------------------------------------------------------------

def test_fraction_curve_on_a_hand_made_history():
    # best 10 us; evaluations: a failure, 20 us, 12.5 us, 10 us
    curve = evaluate.fraction_curve(10.0, [None, 20.0, 12.5, 10.0], ns=(1, 2, 3, 4, 8))
    assert curve == [0.0, 0.5, 0.8, 1.0, 1.0]


def test_random_curve_is_the_exact_expectation():
    # three points: 10 us, 20 us, a failure. N=1: (1 + 0.5 + 0) / 3; N=2: pairs {10,20} {10,x} {20,x}
    curve = evaluate.random_curve([10.0, 20.0, None], ns=(1, 2, 3))
    assert curve == pytest.approx([0.5, (1 + 1 + 0.5) / 3, 1.0])
    assert evaluate.random_curve([None, None], ns=(1, 2)) == [0.0, 0.0]


def test_quartiles_and_markdown():
    assert evaluate.quartiles([1.0, 2.0, 3.0, 4.0, 5.0]) == (2.0, 3.0, 4.0)
    result = {"curves": {"heuristic": [[0.5, 1.0], [0.7, 0.9]], "random": [[0.2, 0.4], [0.4, 0.6]]},
              "no_gpu": {"heuristic": [1.0, 0.5]}, "used": ["a", "b"], "skipped": [], "coverage": [1.0, 0.5],
              "splits": ["heldout-shape", "heldout-range"], "families": ["gemm_f32", "gemm_f32"]}
    text = evaluate.markdown(result, "t", ns=(1, 8))
    assert "| gemm_f32 | 2 | 0.60 / 0.95 | 0.30 / 0.50 |" in text
    assert "| heuristic | 0.60 (0.55–0.65) | 0.95 (0.93–0.97) |" in text
    assert "| heuristic | 0.75 (0.62–0.88) | 50% |" in text


def test_replay_runs_the_search_on_measurements_only(trained):
    net, data, _ = trained
    priors = {"learned": lambda: evaluate.ReplayLearned(net), "heuristic": HeuristicPrior}
    result = evaluate.evaluate(data, priors, seeds=1, min_points=8)
    assert sorted(result["used"]) == sorted(s.shape_id for s in data if s.split != "train")
    for curves in result["curves"].values():
        for curve in curves:
            assert all(0.0 <= v <= 1.0 + 1e-9 for v in curve)
            assert curve == sorted(curve)                          # more evaluations never lose ground
    assert result["coverage"] == [1.0] * len(result["used"])
    learned_first = sorted(c[0] for c in result["curves"]["learned"])
    heuristic_first = sorted(c[0] for c in result["curves"]["heuristic"])
    assert learned_first[len(learned_first) // 2] >= heuristic_first[len(heuristic_first) // 2]


# -- collect.py and the problem list -------------------------------------------------------------

def test_problem_list_is_deterministic_with_both_held_out_splits():
    specs = problems.problem_specs(0)
    assert specs == problems.problem_specs(0) and specs != problems.problem_specs(1)
    assert len(specs) >= 300 and len({s.shape_id for s in specs}) == len(specs)
    splits = {s.split for s in specs}
    assert splits == {"train", "heldout-shape", "heldout-range"}
    for spec in specs:
        band = problems.FAMILIES[spec.family][2]
        assert (spec.split == "heldout-range") == (spec.size_log2 >= band)


def test_collect_dry_run_enumerates_deterministically(capsys):
    assert collect.main(["--dry-run", "--families", "conv2d,softmax", "--limit", "12"]) == 0
    first = capsys.readouterr().out.splitlines()
    assert collect.main(["--dry-run", "--families", "conv2d,softmax", "--limit", "12"]) == 0
    assert capsys.readouterr().out.splitlines() == first and len(first) >= 12
    rows = [json.loads(line) for line in first]
    assert {r["round"] for r in rows} == {0}
    specs = {s.shape_id: s for s in problems.problem_specs(0, ["conv2d", "softmax"])}
    seen: set[tuple[str, str]] = set()
    for r in rows:                    # each (problem, sketch) starts from the sketch's default point
        if (r["shape_id"], r["sketch"]) in seen:
            continue
        seen.add((r["shape_id"], r["sketch"]))
        problem = classify(parse_intent(specs[r["shape_id"]].intent))
        sketch = next(s for f in FAMILIES.values() for s in f.sketches if s.name == r["sketch"])
        assert r["tokens"] == sketch.default_point(problem, ARCH)


def test_collect_resume_skips_what_the_dataset_holds(tmp_path, capsys):
    assert collect.main(["--dry-run", "--families", "conv2d", "--limit", "2"]) == 0
    planned = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    spec = next(s for s in problems.problem_specs(0, ["conv2d"]) if s.shape_id == planned[0]["shape_id"])
    held = tmp_path / "d.jsonl"
    held.write_text(json.dumps({"v": 1, "seed": 0, "shape_id": spec.shape_id, "sketch": planned[0]["sketch"],
                                "tokens": planned[0]["tokens"]}) + "\n")
    assert collect.main(["--dry-run", "--families", "conv2d", "--limit", "2", "--resume",
                         "--out", str(held)]) == 0
    again = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert planned[0] not in again and planned[1] in again


def test_collect_refuses_to_mix_into_an_existing_file(tmp_path, capsys):
    held = tmp_path / "d.jsonl"
    held.write_text("{}\n")
    assert collect.main(["--out", str(held), "--families", "conv2d"]) == 1
    assert capsys.readouterr().err.strip().endswith("--resume to add to it, or pick --out")


def test_unknown_family_is_a_usage_error(capsys):
    assert collect.main(["--dry-run", "--families", "sorting"]) == 2
    assert "no problems" in capsys.readouterr().err


def test_replay_never_evaluates_an_unmeasured_point(trained):
    net, data, _ = trained
    shape = next(s for s in data if s.split != "train")
    rng = random.Random(3)
    sparse = dataset.Shape(shape.shape_id, shape.family, shape.split, shape.intent, shape.target,
                           shape.kernel_name, [r for r in shape.records if rng.random() < 0.3])
    replay = evaluate.Replay(sparse)
    assert 0.1 < replay.coverage() < 0.5
    for denoiser in (evaluate.ReplayLearned(net), HeuristicPrior()):
        found = replay.tuned(denoiser, seed=0)    # an unmeasured point would have no record: KeyError
        assert found and all(t is None or t >= replay.best_us for t in found)


class _FakeRunner:
    """The runner's surface collect.py uses; every kernel 'verifies' in 1 us per point index."""

    gpu = {"gpu": "NVIDIA H200", "arch": "sm_90"}

    def __init__(self):
        self.symbols: list[str] = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def available(self):
        return True

    def build_arch(self):
        return "sm_90"

    def ceilings(self):
        return None

    def run_library(self, library, symbol, rendered, problem, trials):
        from dice_engine.runner.report import RunReport
        assert Path(library).is_file() and trials == collect.TRIALS
        self.symbols.append(symbol)
        return RunReport(True, "ok", time_us=1.0 + len(self.symbols))


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc")
def test_collect_builds_in_batches_records_and_stops_at_its_budget(tmp_path):
    import argparse
    import time
    out_path = tmp_path / "d.jsonl"
    runner = _FakeRunner()
    args = argparse.Namespace(time_budget=25.0, jobs=2, seed=0, target="H200")
    started = time.monotonic()
    with out_path.open("a") as out:
        counts = collect.run(args, problems.problem_specs(0, ["softmax"]), out, set(), started,
                             make_runner=lambda: runner)
    assert time.monotonic() - started < 25.0 + 15.0      # running builds are cancelled at the deadline
    rows = dataset.read_records(out_path)
    assert counts["measured"] == len(rows) >= 8 and counts["ok"] == len(runner.symbols)
    ok = [r for r in rows if r["status"] == "ok"]
    assert ok and all(r["resources"] and r["cost_us"] > 0 and r["target"] == "H200" for r in ok)
    # one library per (problem, sketch) batch: its points' launchers are named _p0, _p1, ...
    assert any(s.endswith("_p1_launch") for s in runner.symbols)
    assert len({(r["shape_id"], r["sketch"], dataset.point_key(r["tokens"])) for r in rows}) == len(rows)


def test_train_and_evaluate_scripts_end_to_end(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in syn.records(SIZES, HELDOUT)))
    weights = tmp_path / "w.npz"
    assert train.main(["--data", str(data), "--out", str(weights), "--steps", "200", "--hidden", "32"]) == 0
    net, why = load(weights)
    assert net is not None and net.meta["include_heldout"] is False and net.meta["problems"] == len(SIZES)
    assert net.meta["patterns"] == ["elementwise"] and net.meta["archs"] == ["sm_90"]
    assert net.meta["examples_per_sketch"][syn.SKETCH.name] > 30
    report = tmp_path / "e.md"
    assert evaluate.main(["--data", str(data), "--weights", str(weights), "--out", str(report),
                          "--seeds", "1", "--min-points", "8"]) == 0
    text = report.read_text()
    assert f"{len(HELDOUT)} held-out problems" in text
    assert all(f"| {name} |" in text for name in ("learned", "heuristic", "random"))
    capsys.readouterr()
    assert evaluate.main(["--data", str(tmp_path / "none.jsonl")]) == 1
    assert capsys.readouterr().err.strip() == f"evaluate.py: no dataset at {tmp_path / 'none.jsonl'}"
