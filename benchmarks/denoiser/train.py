"""Train the learned denoiser on a collected dataset and write its weights into the package.

    python benchmarks/denoiser/train.py [--data benchmarks/denoiser/data/measurements.jsonl]
        [--out dice_engine/refine/weights/denoiser.npz] [--steps 2000] [--include-heldout]

The network (dice_engine/refine/denoiser_model.py) is trained as a masked discrete diffusion
model over design tokens: each example is a verified design of one (problem, sketch), weighted
by its speed relative to the fastest design measured for that pair ((best / time)^4, so the
best counts 1 and a design at half its speed 1/16); each step masks a random fraction of its
tokens (drawn uniformly per example, at least one token) and the loss is the weighted
cross-entropy of the masked tokens given the rest, the problem's features and the target's.
Held-out problems (split != "train") are left out unless --include-heldout (for the weights
shipped after the evaluation). It prints the top-1 accuracy of each token of the held-out
problems' fastest designs with every token masked, beside the heuristic prior's default point.
CPU torch; a few minutes on two cores.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE)]

from dataset import DatasetError, Shape, by_sketch, read_records, shapes  # noqa: E402

from dice_engine.arch import resolve  # noqa: E402
from dice_engine.intent import IntentError, parse_intent  # noqa: E402
from dice_engine.ir.patterns import Problem, classify  # noqa: E402
from dice_engine.refine.denoiser_model import WEIGHTS_PATH, DenoiserNet, Slot, Vocabulary  # noqa: E402
from dice_engine.refine.features import FEATURE_NAMES, problem_features  # noqa: E402
from dice_engine.sketches.registry import ALL_SKETCHES  # noqa: E402

SPEED_POWER = 4.0        # an example's weight: (best / time) ** SPEED_POWER
MIN_WEIGHT = 0.02        # lighter examples are dropped
SKETCHES = {s.name: s for s in ALL_SKETCHES}


@dataclass
class Example:
    shape: str
    split: str
    features: np.ndarray
    sketch: str
    tokens: dict[str, Any]
    weight: float
    best: bool             # the fastest design of its (problem, sketch)


def _problem(shape: Shape) -> tuple[Problem, Any] | None:
    try:
        return classify(parse_intent(shape.intent)), resolve(shape.target)
    except (IntentError, KeyError):
        return None


def vocabulary(data: list[Shape]) -> Vocabulary:
    """Every (sketch, token) slot of the dataset, with the union of its choices over problems."""
    choices: dict[tuple[str, str], list[Any]] = defaultdict(list)
    order: list[tuple[str, str]] = []
    for shape in data:
        parsed = _problem(shape)
        if parsed is None:
            continue
        problem, arch = parsed
        for sketch_name in sorted(by_sketch(shape)):
            sketch = SKETCHES.get(sketch_name)
            if sketch is None:
                continue
            for token in sketch.space(problem, arch).tokens:
                key = (sketch_name, token.name)
                if key not in choices:
                    order.append(key)
                known = choices[key]
                known.extend(c for c in token.choices if c not in known)
    slots = []
    for key in order:
        values = choices[key]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            values = sorted(values)
        slots.append(Slot(key[0], key[1], tuple(values)))
    return Vocabulary(slots)


def examples(data: list[Shape]) -> list[Example]:
    out = []
    for shape in data:
        parsed = _problem(shape)
        if parsed is None:
            continue
        features = problem_features(*parsed)
        for sketch, records in by_sketch(shape).items():
            ok = [r for r in records if r["status"] == "ok" and r["time_us"]]
            if not ok:
                continue
            best = min(r["time_us"] for r in ok)
            for r in ok:
                weight = (best / r["time_us"]) ** SPEED_POWER
                if weight >= MIN_WEIGHT:
                    out.append(Example(shape.shape_id, shape.split, features, sketch, r["tokens"], weight,
                                       r["time_us"] == best))
    return out


def _arrays(vocab: Vocabulary, items: list[Example]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per example: the row's fixed part (features, sketch one-hot), each slot's choice index
    (-1: not a slot of its sketch, or a value the vocabulary lacks), and the weight."""
    fixed = np.zeros((len(items), len(FEATURE_NAMES) + len(vocab.sketches)), dtype=np.float32)
    target = np.full((len(items), len(vocab.slots)), -1, dtype=np.int64)
    for i, ex in enumerate(items):
        fixed[i, :len(FEATURE_NAMES)] = ex.features
        fixed[i, len(FEATURE_NAMES) + vocab.sketches.index(ex.sketch)] = 1.0
        for name, value in ex.tokens.items():
            slot = vocab.slot(ex.sketch, name)
            index = vocab.choice_index(slot, value) if slot is not None else None
            if index is not None:
                target[i, slot] = index
    return fixed, target, np.array([ex.weight for ex in items], dtype=np.float32)


def fit(vocab: Vocabulary, items: list[Example], *, steps: int, hidden: int = 256, batch: int = 256,
        lr: float = 2e-3, seed: int = 0, log_every: int = 0, threads: int = 1) -> DenoiserNet:
    """The network trained on `items` (torch on the CPU), as numpy weights. One thread by
    default: the matrices are small, and on a shared machine torch's worker threads spin."""
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    fixed, target, weight = (torch.from_numpy(a) for a in _arrays(vocab, items))
    slots, width = len(vocab.slots), vocab.width
    valid = torch.from_numpy(vocab.valid())
    l1 = torch.nn.Linear(vocab.input_size, hidden)
    l2 = torch.nn.Linear(hidden, hidden)
    lo = torch.nn.Linear(hidden, slots * width)
    params = [*l1.parameters(), *l2.parameters(), *lo.parameters()]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, total_steps=max(1, steps))
    present_all = target >= 0
    base = torch.arange(slots) * (width + 1)
    for step in range(steps):
        pick = torch.from_numpy(rng.integers(0, len(items), size=min(batch, len(items))))
        tgt, present = target[pick], present_all[pick]
        rate = torch.rand(len(pick), 1)
        masked = (torch.rand(len(pick), slots) < rate) & present
        none = ~masked.any(1)           # at least one masked slot per example
        first = torch.argmax(present.float() + torch.rand(len(pick), slots) * 0.5, dim=1)
        masked[none, first[none]] = True
        masked &= present
        code = torch.where(masked, torch.full_like(tgt, width), tgt.clamp(min=0))
        onehot = torch.zeros(len(pick), slots * (width + 1))
        rows = torch.arange(len(pick))[:, None].expand(-1, slots)
        onehot[rows[present], (base + code)[present]] = 1.0
        x = torch.cat([fixed[pick], onehot], dim=1)
        h = torch.relu(l1(x))
        h = h + torch.relu(l2(h))
        logits = lo(h).view(len(pick), slots, width).masked_fill(~valid, -1e9)
        losses = torch.nn.functional.cross_entropy(logits[masked], tgt[masked], reduction="none")
        per_row = weight[pick][:, None].expand(-1, slots)[masked]
        loss = (losses * per_row).sum() / per_row.sum().clamp(min=1e-6)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(f"step {step}: loss {loss.item():.4f}", file=sys.stderr)
    arrays = {"w1": l1.weight.detach().numpy().T, "b1": l1.bias.detach().numpy(),
              "w2": l2.weight.detach().numpy().T, "b2": l2.bias.detach().numpy(),
              "wo": lo.weight.detach().numpy().T, "bo": lo.bias.detach().numpy()}
    return DenoiserNet(vocab, arrays)


def token_accuracy(net: DenoiserNet, items: list[Example]) -> dict[str, float]:
    """Top-1 accuracy of every token of `items` (their fastest designs) with all tokens masked."""
    hits: dict[str, list[float]] = defaultdict(list)
    vocab = net.vocab
    for ex in items:
        slots = {name: vocab.slot(ex.sketch, name) for name in ex.tokens}
        if any(s is None for s in slots.values()):
            continue
        row = vocab.encode(ex.features, ex.sketch, {s: None for s in slots.values()})
        logits = net.logits(row[None])[0]
        for name, slot in slots.items():
            predicted = vocab.slots[slot].choices[int(np.argmax(logits[slot]))]
            hits[name].append(float(predicted == ex.tokens[name]))
    every = [h for values in hits.values() for h in values]
    return {"all": float(np.mean(every)) if every else math.nan,
            **{k: float(np.mean(v)) for k, v in sorted(hits.items())}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="train.py", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / "data" / "measurements.jsonl")
    parser.add_argument("--out", type=Path, default=WEIGHTS_PATH)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--include-heldout", action="store_true",
                        help="train on every problem (for the shipped weights, after evaluate.py)")
    args = parser.parse_args(argv)
    if min(args.steps, args.hidden, args.threads) < 1:
        print("train.py: --steps, --hidden and --threads must be positive", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        data = shapes(read_records(args.data))
    except DatasetError as e:
        print(f"train.py: {e}", file=sys.stderr)
        return 1
    all_items = examples(data)
    train = [ex for ex in all_items if args.include_heldout or ex.split == "train"]
    if not train:
        print(f"train.py: {args.data} holds no verified designs to train on", file=sys.stderr)
        return 1
    vocab = vocabulary(data)
    net = fit(vocab, train, steps=args.steps, hidden=args.hidden, seed=args.seed, log_every=500,
              threads=args.threads)
    heldout_best = [ex for ex in all_items if ex.split != "train" and ex.best]
    accuracy = token_accuracy(net, heldout_best)
    per_sketch = Counter(ex.sketch for ex in train)
    trained_on = [s for s in data if args.include_heldout or s.split == "train"]
    parsed = [p for s in trained_on if (p := _problem(s)) is not None]
    net.meta = {"patterns": sorted({problem.pattern for problem, _ in parsed}),
                "archs": sorted({arch.name for _, arch in parsed}), "examples_per_sketch": dict(per_sketch),
                "data": args.data.name, "records": sum(len(s.records) for s in data),
                "problems": len(data), "examples": len(train), "gpus": sorted({r["gpu"] for s in data
                                                                                 for r in s.records}),
                "include_heldout": args.include_heldout, "steps": args.steps, "hidden": args.hidden,
                "heldout_token_accuracy": accuracy}
    net.save(args.out)
    print(json.dumps({"heldout_token_accuracy": accuracy, "heuristic_default_accuracy":
                      default_accuracy(data, heldout_best)}, indent=1))
    print(f"train.py: {len(train)} examples from {len(data)} problems, {args.steps} steps in "
          f"{time.monotonic() - started:.0f} s -> {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)",
          file=sys.stderr)
    return 0


def default_accuracy(data: list[Shape], items: list[Example]) -> float:
    """How often the heuristic prior's default point holds the fastest design's token."""
    problems = {s.shape_id: _problem(s) for s in data}
    hits = []
    for ex in items:
        parsed, sketch = problems.get(ex.shape), SKETCHES.get(ex.sketch)
        if parsed is None or sketch is None:
            continue
        default = sketch.default_point(*parsed)
        hits += [float(default.get(k) == v) for k, v in ex.tokens.items()]
    return float(np.mean(hits)) if hits else math.nan


if __name__ == "__main__":
    sys.exit(main())
