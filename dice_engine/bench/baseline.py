"""PyTorch eager (and torch.compile) timed the way the runner times DICE kernels: CUDA events
around the call only, an L2 flush before every run, warm-up, median of the runs."""
from __future__ import annotations

import statistics
from typing import Callable

import numpy as np
import torch

from ..ir.graph import Program
from ..runner.inputs import draw_inputs
from .torch_program import torch_function


class TorchTimer:
    def __init__(self, l2_bytes: int, runs: int = 50, warmup: int = 5):
        # f32 means f32: DICE's f32 kernels do not round operands to TF32, so neither may PyTorch.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self.flush = torch.empty(max(2 * l2_bytes, 64 << 20), dtype=torch.uint8, device="cuda")
        self.runs, self.warmup = runs, warmup

    def median_us(self, call: Callable[[], object]) -> float:
        for _ in range(self.warmup):
            self.flush.fill_(1)
            call()
        torch.cuda.synchronize()
        pairs = []
        for _ in range(self.runs):
            self.flush.fill_(1)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            pairs.append((start, end))
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) * 1000.0 for s, e in pairs)


def torch_inputs(program: Program, bindings: dict[str, int], seed: int) -> dict[str, torch.Tensor]:
    """The same operator-aware random inputs the runner draws, as CUDA tensors."""
    arrays = draw_inputs(program, bindings, np.random.default_rng(seed))
    return {name: torch.from_numpy(np.ascontiguousarray(arr)).to("cuda").to(_torch_dtype(program, name))
            for name, arr in arrays.items()}


def _torch_dtype(program: Program, name: str) -> torch.dtype:
    return getattr(torch, program.inputs[name].dtype.torch)


def time_eager(program: Program, inputs: dict[str, torch.Tensor], timer: TorchTimer) -> float:
    fn = torch_function(program)
    return timer.median_us(lambda: fn(inputs))


def time_compiled(program: Program, inputs: dict[str, torch.Tensor],
                  timer: TorchTimer) -> tuple[float | None, str]:
    """torch.compile'd time, or None and why it did not work."""
    fn = torch_function(program)
    try:
        compiled = torch.compile(lambda: fn(inputs), dynamic=False)
        compiled()
        return timer.median_us(compiled), ""
    except Exception as exc:   # inductor fails in many ways; the bench records why and goes on
        first = str(exc).splitlines()[0][:120] if str(exc) else ""
        return None, f"{type(exc).__name__}: {first}"
