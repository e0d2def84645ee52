"""The runner's random inputs drawn with torch where the tensors live (on the GPU: nothing
crosses the bus). Same distributions as `inputs.draw_inputs` (never zero; positive and away
from zero where an operator needs it), not the same numbers: a trial is fixed by its generator's
seed, so every candidate of a search sees the same draws."""
from __future__ import annotations

import torch

from ..ir.graph import Program
from .inputs import concrete, index_extents, positive_inputs


def trial_generator(device: torch.device | str, seed: int, case: int, trial: int) -> torch.Generator:
    """The generator of one trial: a function of (seed, shape case, trial) only."""
    generator = torch.Generator(device=device)
    generator.manual_seed((seed * 1_000_003 + case * 1009 + trial) % (1 << 63))
    return generator


def _draw(shape: tuple[int, ...], kind: str, positive: bool, generator: torch.Generator,
          device: torch.device | str, below: int | None = None) -> torch.Tensor:
    if kind == "bool":
        return torch.rand(shape, generator=generator, device=device) < 0.5
    if kind == "int" and below is not None:     # an index: any valid address, 0 included
        return torch.randint(0, below, shape, generator=generator, device=device, dtype=torch.int64)
    if kind == "int":
        magnitude = torch.randint(1, 10, shape, generator=generator, device=device, dtype=torch.int64)
        if positive:
            return magnitude
        sign = torch.randint(0, 2, shape, generator=generator, device=device, dtype=torch.int64) * 2 - 1
        return magnitude * sign
    unit = torch.rand(shape, generator=generator, device=device, dtype=torch.float32)
    if positive:
        return unit.mul_(1.5).add_(0.5)
    values = unit.mul_(1.8).sub_(0.9)                       # [-0.9, 0.9) ...
    return values.add_(torch.copysign(torch.tensor(0.1, device=device), values))   # ... ±[0.1, 1.0)


def draw_tensors(program: Program, bindings: dict[str, int], generator: torch.Generator,
                 device: torch.device | str) -> dict[str, torch.Tensor]:
    """Fresh inputs at `bindings` in their own dtypes, on `device`."""
    positive = positive_inputs(program)
    extents = index_extents(program)
    out: dict[str, torch.Tensor] = {}
    for name, decl in program.inputs.items():
        below = concrete((extents[name],), bindings)[0] if name in extents else None
        values = _draw(concrete(decl.shape, bindings), decl.dtype.kind, name in positive, generator, device,
                       below)
        if decl.dtype.name == "u8":
            values = values.abs_()
        out[name] = values.to(getattr(torch, decl.dtype.torch))
    return out


def draw_into(targets: dict[str, torch.Tensor], program: Program, bindings: dict[str, int],
              generator: torch.Generator) -> None:
    """Fresh inputs written into `targets` (views of the candidate's input buffers)."""
    for name, tensor in draw_tensors(program, bindings, generator, generator.device).items():
        targets[name].copy_(tensor)
