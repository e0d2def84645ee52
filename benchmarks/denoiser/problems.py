"""The problems the denoiser's dataset is collected on: several hundred shapes across the main
families, drawn deterministically from a seed, each marked with its split.

Splits: "train"; "heldout-range": every shape whose size lies in its family's held-out band
(the largest sizes drawn, never seen in training: does the model carry over to real sizes?);
"heldout-shape": about one shape in seven of the rest, drawn at random.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable

HELDOUT_SHAPE_FRACTION = 1 / 7


@dataclass(frozen=True)
class ProblemSpec:
    shape_id: str          # "<family>-<nnn>", stable for a seed
    family: str
    intent: str
    size_log2: float       # log2 of the family's size measure (elements, or GEMM/conv flops)
    split: str             # "train" | "heldout-shape" | "heldout-range"


Draw = Callable[[random.Random], tuple[str, float]]


def _dim(rng: random.Random, lo: int, hi: int, odd: float = 0.2) -> int:
    """A power of two in [2^lo, 2^hi], sometimes nudged off it (odd sizes and tails)."""
    value = 1 << rng.randint(lo, hi)
    if rng.random() < odd:
        value = max(1, int(value * rng.choice((0.75, 1.25, 1.5))) + rng.choice((0, 1, 3)))
    return value


def _elementwise(rng: random.Random) -> tuple[str, float]:
    dtype = rng.choice(("f32", "f32", "f32", "f16", "bf16"))
    rows, cols = _dim(rng, 0, 12, 0.1), _dim(rng, 10, 16)
    while rows * cols > 1 << 27:
        rows = max(1, rows // 2)
    expr = rng.choice(("relu(x)", "gelu(x)", "sigmoid(x) * x", "x * 2.5 + y", "relu(x) + y", "exp(x) - y"))
    names = "x, y" if "y" in expr else "x"
    shape = f"[{cols}]" if rows == 1 else f"[{rows}, {cols}]"
    return f"out = {expr}; {names}: {dtype}{shape}", math.log2(rows * cols)


def _rows(op: str) -> Draw:
    def draw(rng: random.Random) -> tuple[str, float]:
        rows, cols = _dim(rng, 4, 14), _dim(rng, 5, 15)
        while rows * cols > 1 << 27:
            rows //= 2
        dtype = rng.choice(("f32", "f32", "f32", "f16"))
        if op == "layer_norm":
            intent = (f"y = layer_norm(x, [{cols}], w, b); x: {dtype}[{rows}, {cols}]; w: {dtype}[{cols}]; "
                      f"b: {dtype}[{cols}]")
        elif op == "softmax":
            intent = f"y = softmax(x, dim=1); x: {dtype}[{rows}, {cols}]"
        else:
            intent = f"s = {op}(x, dim=1); x: {dtype}[{rows}, {cols}]"
        return intent, math.log2(rows * cols)
    return draw


def _columns(rng: random.Random) -> tuple[str, float]:
    rows, cols = _dim(rng, 4, 15), _dim(rng, 4, 14)
    while rows * cols > 1 << 27:
        rows //= 2
    op = rng.choice(("sum", "sum", "max", "mean"))
    return f"s = {op}(x, dim=0); x: f32[{rows}, {cols}]", math.log2(rows * cols)


def _gemm(dtype: str) -> Draw:
    def draw(rng: random.Random) -> tuple[str, float]:
        kind = rng.choice(("square", "rect", "rect", "tall", "wide_k", "batched"))
        if kind == "square":
            m = n = k = _dim(rng, 7, 12, 0.15)
        elif kind == "tall":          # tall-skinny: many rows, few columns or a short K
            m, n, k = _dim(rng, 12, 15), _dim(rng, 4, 7), _dim(rng, 5, 11)
        elif kind == "wide_k":
            m, n, k = _dim(rng, 6, 10), _dim(rng, 6, 10), _dim(rng, 12, 15)
        else:
            m, n, k = _dim(rng, 6, 12), _dim(rng, 6, 12), _dim(rng, 6, 12)
        batch = 1 << rng.randint(1, 6) if kind == "batched" else 1
        while 2 * batch * m * n * k > 1 << 36:     # a slow design still runs in milliseconds
            batch, m = (batch // 2, m) if batch > 1 else (1, m // 2)
        if batch > 1:
            intent = f"C = A @ B; A: {dtype}[{batch}, {m}, {k}]; B: {dtype}[{batch}, {k}, {n}]"
        else:
            intent = f"C = A @ B; A: {dtype}[{m}, {k}]; B: {dtype}[{k}, {n}]"
        return intent, math.log2(2 * batch * m * n * k)
    return draw


def _conv(rng: random.Random) -> tuple[str, float]:
    n, c, hw = 1 << rng.randint(0, 4), 1 << rng.randint(3, 7), rng.choice((14, 28, 32, 56, 64))
    k, r = 1 << rng.randint(4, 7), rng.choice((1, 3, 3, 5))
    out = hw - r + 1
    flops = 2 * n * k * out * out * c * r * r
    return f"y = conv2d(x, w); x: f32[{n}, {c}, {hw}, {hw}]; w: f32[{k}, {c}, {r}, {r}]", math.log2(flops)


# family → (how to draw one, shapes, the held-out band: sizes at or above this log2)
FAMILIES: dict[str, tuple[Draw, int, float]] = {
    "elementwise": (_elementwise, 60, 25.5),
    "row_sum": (_rows("sum"), 25, 25.5),
    "row_max": (_rows("max"), 15, 25.5),
    "column_reduction": (_columns, 30, 25.5),
    "softmax": (_rows("softmax"), 35, 25.5),
    "layer_norm": (_rows("layer_norm"), 30, 25.5),
    "gemm_f32": (_gemm("f32"), 60, 34.0),
    "gemm_f16": (_gemm("f16"), 40, 34.0),
    "conv2d": (_conv, 15, 31.0),
}


def problem_specs(seed: int = 0, families: list[str] | None = None) -> list[ProblemSpec]:
    """Every problem of the dataset (or of `families`), in a fixed order for `seed`."""
    out: list[ProblemSpec] = []
    for family, (draw, count, band) in FAMILIES.items():
        if families is not None and family not in families:
            continue
        rng = random.Random(f"{seed}:{family}")
        seen: set[str] = set()
        while len([s for s in out if s.family == family]) < count:
            intent, size = draw(rng)
            if intent in seen:
                continue
            seen.add(intent)
            split = ("heldout-range" if size >= band
                     else "heldout-shape" if rng.random() < HELDOUT_SHAPE_FRACTION else "train")
            out.append(ProblemSpec(f"{family}-{len(seen) - 1:03d}", family, intent, round(size, 3), split))
    return out
