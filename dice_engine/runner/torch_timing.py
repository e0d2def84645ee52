"""PyTorch eager timed the way the runner times DICE kernels: CUDA events around the call only,
an L2 flush before every run, warm-up, median of the runs. Used by the runner child (the
reference time beside every candidate) and by the benchmark (which adds torch.compile)."""
from __future__ import annotations

import statistics
from typing import Callable

import torch

from ..ir.graph import Program
from .device import run_counts
from .device_inputs import draw_tensors, trial_generator
from .torch_program import torch_function


class TorchTimer:
    def __init__(self, l2_bytes: int, runs: int = 50, warmup: int = 5):
        # f32 means f32: DICE's f32 kernels do not round operands to TF32, so neither may PyTorch.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self.flush = torch.empty(max(2 * l2_bytes, 64 << 20), dtype=torch.uint8, device="cuda")
        self.runs, self.warmup = runs, warmup

    def _timed(self, call: Callable[[], object]) -> tuple[torch.cuda.Event, torch.cuda.Event]:
        self.flush.fill_(1)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        return start, end

    def median_us(self, call: Callable[[], object]) -> float:
        first = self._timed(call)          # also the first warm-up run
        torch.cuda.synchronize()
        warmup, runs = run_counts(first[0].elapsed_time(first[1]) * 1e-3, self.runs, self.warmup)
        for _ in range(warmup - 1):
            self._timed(call)
        torch.cuda.synchronize()
        pairs = [self._timed(call) for _ in range(runs)]
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) * 1000.0 for s, e in pairs)


def torch_inputs(program: Program, bindings: dict[str, int], seed: int) -> dict[str, torch.Tensor]:
    """Operator-aware random inputs like the runner's trials, drawn on the GPU."""
    return draw_tensors(program, bindings, trial_generator(torch.device("cuda"), seed, 0, 0), "cuda")


def time_eager(program: Program, inputs: dict[str, torch.Tensor], timer: TorchTimer) -> float:
    fn = torch_function(program)
    return timer.median_us(lambda: fn(inputs))
