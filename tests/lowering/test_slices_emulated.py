"""Slices, pads and concatenations inside the general lowering's kernels, computed on the CPU
emulator (tests/sketches/cuda_emu.h + g++) against the float64 reference: every kernel plan of
the cov_* KernelBench task files that reads through one of these index maps (or a reshape:
repeat, expand). No GPU needed."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.patterns import classify
from dice_engine.kernelbench.lower import lower
from dice_engine.kernelbench.task import load_task
from dice_engine.kernelbench.trace import trace_task
from dice_engine.lowering import GeneralLowering

sys.path.insert(0, str(Path(__file__).parents[1] / "sketches"))
from cpu_emulation import assert_matches_reference, needs_emulator  # noqa: E402
from test_lowering_emulated import ALLOCATOR  # noqa: E402

TASKS = Path(__file__).parents[1] / "kernelbench" / "tasks"
STEMS = ["cov_exclusive_cumsum", "cov_slice_step", "cov_select_narrow", "cov_stack_mean",
         "cov_chunk_gate", "cov_pad_constant", "cov_expand_repeat", "cov_pad_modes", "cov_diag_hinge_scans"]


class Emulated(GeneralLowering):
    def render(self, *args):
        rendered = super().render(*args)
        return dataclasses.replace(rendered, source=ALLOCATOR + rendered.source)


def _index_map_programs(stem: str) -> list[Program]:
    lowered = lower(trace_task(load_task(TASKS / f"{stem}.py")))
    programs = []
    for plan in lowered.plans:
        if not {"slice", "pad", "reshape"} & {n.op for n in plan.expr.walk()}:
            continue
        decls = {n.name: TensorDecl(n.name, n.dtype, n.shape) for n in plan.leaves()}
        programs.append(Program(decls, plan.out.name, plan.expr))
    return programs


@needs_emulator
@pytest.mark.parametrize("stem", STEMS)
def test_index_maps_compute_the_reference(stem: str, tmp_path) -> None:
    programs = _index_map_programs(stem)
    assert programs
    for k, program in enumerate(programs):
        problem = classify(program)
        point = {"threads": 64, "strategy": "thread", "items": 2, "unroll": 2, "fuse": "kernels", "tile": 0}
        work = tmp_path / str(k)
        work.mkdir()
        assert_matches_reference(Emulated(), problem, point, work)
