"""Random inputs suited to a program's operators, and the symbol bindings to check.

Values are never zero: zeros hide unwritten outputs and wrong indexing. An input that reaches
the argument of log/sqrt/rsqrt, the base of pow or a divisor is drawn positive and away from
zero; everything else is drawn with a random sign and a magnitude in [0.1, 1], which keeps exp
and friends bounded and GEMM sums far from fp16 overflow.
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import Dim, Program
from ..ir.reference import from_storage, to_storage

# operator → indices of the arguments that must be positive (log's argument, pow's base, divisors)
POSITIVE_ARGS: dict[str, tuple[int, ...]] = {"log": (0,), "sqrt": (0,), "rsqrt": (0,), "pow": (0,),
                                             "div": (1,)}
DEFAULT_SYMBOL = 4096


def positive_inputs(program: Program) -> set[str]:
    """Names of inputs that feed, through any expression, an argument that must be positive."""
    positive: set[str] = set()
    for node in program.output.walk():
        for index in POSITIVE_ARGS.get(node.op, ()):
            if index < len(node.args):
                positive |= {n.name for n in node.args[index].walk() if n.op == "input" and n.name}
    return positive


def index_extents(program: Program) -> dict[str, Dim]:
    """Integer inputs that address another tensor (a gather's index): name → the extent their
    values must stay below (the smallest where several gathers read one input)."""
    out: dict[str, Dim] = {}
    for node in program.output.walk():
        if node.op != "gather":
            continue
        extent = node.args[0].shape[node.attr("dim")]
        for n in node.args[1].walk():
            if n.op == "input" and n.name and not n.dtype.is_float:
                known = out.get(n.name)
                if known is None or (isinstance(extent, int) and isinstance(known, int) and extent < known):
                    out[n.name] = extent
    return out


def _draw(rng: np.random.Generator, shape: tuple[int, ...], kind: str, positive: bool,
          below: int | None = None) -> np.ndarray:
    if kind == "bool":
        return rng.random(shape) < 0.5
    if kind == "int" and below is not None:     # an index: any valid address, 0 included
        return rng.integers(0, below, size=shape)
    if kind == "int":
        magnitude = rng.integers(1, 10, size=shape)
        return magnitude if positive else magnitude * (rng.integers(0, 2, size=shape, dtype=np.int8) * 2 - 1)
    # float32 draws: enough resolution for every dtype but f64, and fast for tensors of 10^8 elements
    unit = rng.random(shape, dtype=np.float32)
    if positive:
        return unit * np.float32(1.5) + np.float32(0.5)
    values = unit * np.float32(1.8) - np.float32(0.9)          # [-0.9, 0.9) ...
    values += np.copysign(np.float32(0.1), values)              # ... pushed away from 0: ±[0.1, 1.0)
    return values


def draw_inputs(program: Program, bindings: dict[str, int],
                rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Fresh inputs at `bindings`, already rounded to their dtypes (the reference's form)."""
    positive = positive_inputs(program)
    extents = index_extents(program)
    out: dict[str, np.ndarray] = {}
    for name, decl in program.inputs.items():
        shape = tuple(d if isinstance(d, int) else bindings[d] for d in decl.shape)
        below = concrete((extents[name],), bindings)[0] if name in extents else None
        values = _draw(rng, shape, decl.dtype.kind, name in positive, below)
        if decl.dtype.name == "u8":
            values = np.abs(values)
        out[name] = from_storage(to_storage(values, decl.dtype), decl.dtype).reshape(shape)
    return out


def intent_bindings(program: Program) -> dict[str, int]:
    """Symbol values the intent gives, the default for those bound only at run time."""
    return {s: (program.symbols.get(s) or DEFAULT_SYMBOL) for s in program.symbol_names()}


def odd_bindings(bindings: dict[str, int]) -> dict[str, int]:
    """A second binding with odd, non-power-of-two extents (tails, partial tiles)."""
    return {s: max(1, v // 2 - 1) | 1 for s, v in bindings.items()}


def shapes_to_check(program: Program) -> list[dict[str, int]]:
    first = intent_bindings(program)
    # A torch expression's shape was inferred at the intent's sizes: it serves only those.
    fixed = any(n.op == "torch" for n in program.output.walk())
    return [first, odd_bindings(first)] if first and not fixed else [first]


def concrete(shape: tuple, bindings: dict[str, int]) -> tuple[int, ...]:
    return tuple(d if isinstance(d, int) else bindings[d] for d in shape)


def output_shape(program: Program, bindings: dict[str, int]) -> tuple[int, ...]:
    return concrete(program.output.shape, bindings)
