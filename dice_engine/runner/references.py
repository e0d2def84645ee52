"""Trial inputs and their reference outputs, kept (up to a byte budget) so that the candidates
of one search see the same fresh draws without re-running the float64 reference each time."""
from __future__ import annotations

import os
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..ir import reference
from ..ir.graph import Program
from .inputs import draw_inputs


@dataclass
class Trial:
    inputs: dict[str, np.ndarray]
    expected: np.ndarray
    tie_values: np.ndarray | None     # argmax/argmin: the reduced tensor, to accept equal picks
    tie_dim: int | None

    @property
    def nbytes(self) -> int:
        extra = self.tie_values.nbytes if self.tie_values is not None else 0
        return sum(a.nbytes for a in self.inputs.values()) + self.expected.nbytes + extra


def program_key(program: Program) -> str:
    decls = ";".join(f"{d.name}:{d.dtype}{list(d.shape)}" for d in program.inputs.values())
    return f"{decls}|{program.output!r}|{program.output.dtype}"


def make_trial(program: Program, bindings: dict[str, int], rng: np.random.Generator) -> Trial:
    inputs = draw_inputs(program, bindings, rng)
    expected = np.asarray(reference.evaluate(program, inputs, bindings))
    out = program.output
    if out.op in ("argmax", "argmin") and len(out.attr("dim")) == 1:
        values_program = Program(program.inputs, "values", out.args[0], program.symbols)
        values = np.asarray(reference.evaluate(values_program, inputs, bindings))
        return Trial(inputs, expected, values, out.attr("dim")[0])
    return Trial(inputs, expected, None, None)


class TrialCache:
    def __init__(self, budget_bytes: int = 8 << 30):
        self.budget = budget_bytes
        self._entries: OrderedDict[tuple, Trial] = OrderedDict()
        self._bytes = 0

    def get_many(self, program: Program, bindings: dict[str, int], seed: int, case: int,
                 count: int) -> list[Trial]:
        """Trials 0..count-1 of one shape; missing ones are made in parallel threads (numpy
        releases the GIL in its array loops, and the float64 reference is the slow part)."""
        keys = [(program_key(program), tuple(sorted(bindings.items())), seed, case, t) for t in range(count)]
        missing = [t for t, key in enumerate(keys) if key not in self._entries]
        if missing:
            def make(t: int) -> Trial:
                return make_trial(program, bindings, np.random.default_rng([seed, case, t]))

            with ThreadPoolExecutor(max_workers=min(len(missing), os.cpu_count() or 1)) as pool:
                made = pool.map(make, missing)
                for t, trial in zip(missing, made):
                    self._entries[keys[t]] = trial
                    self._bytes += trial.nbytes
        trials = [self._entries[key] for key in keys]
        for key in keys:
            self._entries.move_to_end(key)
        while self._bytes > self.budget and len(self._entries) > count:
            _, old = self._entries.popitem(last=False)
            self._bytes -= old.nbytes
        return trials
