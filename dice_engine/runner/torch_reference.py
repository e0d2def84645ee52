"""The PyTorch reference of a program, timed inside a runner child the way the child times a
candidate (CUDA events around the call only, warm-up, an L2 flush before every run, median), so
that `reference_time_us` and `time_us` compare like with like. Only where torch with CUDA can
be imported in the child; otherwise there is no reference time (None), never an estimate."""
from __future__ import annotations

import importlib.util
import logging
from typing import Any

from ..ir.graph import Program
from .references import program_key

log = logging.getLogger("dice.runner")


class ReferenceTimer:
    """One per child: torch is imported on first use; times are cached per program and shape."""

    def __init__(self, l2_bytes: int):
        self.l2_bytes = l2_bytes
        self._timer: Any | None = None
        self._usable: bool | None = None
        self._times: dict[tuple, float | None] = {}

    def usable(self) -> bool:
        if self._usable is None:
            self._usable = False
            if importlib.util.find_spec("torch") is not None:
                import torch

                self._usable = bool(torch.cuda.is_available())
        return self._usable

    def time_us(self, program: Program, bindings: dict[str, int], *, runs: int, seed: int) -> float | None:
        """Median µs of PyTorch eager computing `program` at `bindings`, or None (no torch with
        CUDA, or an operator PyTorch eager cannot run as written)."""
        key = (program_key(program), tuple(sorted(bindings.items())), runs)
        if key not in self._times:
            self._times[key] = self._measure(program, bindings, runs, seed) if self.usable() else None
        return self._times[key]

    def _measure(self, program: Program, bindings: dict[str, int], runs: int, seed: int) -> float | None:
        import torch

        from .torch_timing import TorchTimer, time_eager, torch_inputs

        if self._timer is None or self._timer.runs != runs:
            self._timer = TorchTimer(self.l2_bytes, runs=runs)
        try:
            return time_eager(program, torch_inputs(program, bindings, seed), self._timer)
        except (RuntimeError, TypeError, ValueError, KeyError) as exc:   # PyTorch refused the program
            log.warning("no PyTorch reference time: %s: %s", type(exc).__name__, exc)
            return None
        finally:
            torch.cuda.empty_cache()   # the candidates after this one get the memory back
