"""torch.compile timed the way the runner times DICE kernels and PyTorch eager (the timer and
the inputs are the runner's, `runner.torch_timing`)."""
from __future__ import annotations

import torch

from ..ir.graph import Program
from ..runner.torch_program import torch_function
from ..runner.torch_timing import TorchTimer


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
