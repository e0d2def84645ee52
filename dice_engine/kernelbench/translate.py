"""A task file in, a ModelNew file out: load → trace → lower → serve → write → compile check."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..api import CUDAGenerator
from ..compile import compile_cuda
from .generate import ServedKernel, serve
from .lower import Lowered, Unmapped, lower
from .task import load_task
from .trace import trace_task
from .writer import write_model_new


_LAUNCHER = re.compile(r'extern\s+"C"\s+void\s+(\w+)_launch\s*\(([^)]*)\)')


class BuildError(Exception):
    """The generated CUDA did not compile as one library; the message names the first error."""


@dataclass
class Translation:
    lowered: Lowered
    kernels: list[ServedKernel]
    text: str  # the ModelNew file
    arch: str

    def report(self) -> list[str]:
        lines = [f"{self.lowered.traced.task.path.name}: {len(self.kernels)} kernel(s) for {self.arch}"]
        for k in self.kernels:
            fused = " + ".join(k.fused) or "copy"
            tag = "fused " if len(k.fused) > 1 else ""
            lines.append(f"  {k.name}: {tag}{fused}")
            lines += [f"    {line}" for line in k.result.report()]
        return lines + [f"  note: {n}" for n in self.notes]

    @property
    def notes(self) -> list[str]:
        notes = list(self.lowered.notes)
        if any(o.op == "aten.batch_norm" for k in self.kernels for o in k.plan.operations()):
            notes.append(
                "batch_norm in training mode: ModelNew normalizes with the batch's statistics but "
                "does not update the running statistics"
            )
        return notes


def translate(
    path: str | Path, *, arch: str = "sm_90", budget: int = 24, check_compile: bool = True
) -> Translation:
    """Raises TaskError (the file), Unmapped (an operation of forward), GenerationError,
    BuildError, NvccNotFound, KeyError (an unknown arch): each with a one-line message."""
    generator = CUDAGenerator(arch, budget=budget, default_shape=None)
    arch = generator.target.name
    lowered = lower(trace_task(load_task(path)))
    if not lowered.plans:
        raise Unmapped("forward", None, "", "nothing to compute")
    kernels = serve(lowered, generator)
    translation = Translation(lowered, kernels, "", arch)
    translation.text = write_model_new(lowered, kernels, arch, translation.notes)
    text = translation.text
    _check_launchers(kernels)
    if check_compile:
        cuda_arch = text.split('CUDA_ARCH = "', 1)[1].split('"', 1)[0]
        built = compile_cuda(
            "\n".join(k.result.source for k in kernels),
            cuda_arch,
            output="shared",
            flags=["-O3"],
            filename="model_new_kernels.cu",
        )
        if not built.ok:
            raise BuildError(f"the kernels do not compile together for {cuda_arch}: {built.first_error()}")
    return translation


def _check_launchers(kernels: list[ServedKernel]) -> None:
    """Each launcher takes what forward passes: the input pointers, the output, the stream."""
    for k in kernels:
        found = {m.group(1): m.group(2) for m in _LAUNCHER.finditer(k.result.source)}
        params = [p for p in found.get(k.name, "").split(",") if p.strip()]
        if len(params) != len(k.inputs) + 2 or "cudaStream_t" not in params[-1]:
            raise BuildError(f"{k.name}_launch does not take {len(k.inputs)} inputs, an output and a stream")
