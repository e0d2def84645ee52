"""cross_entropy / nll_loss partition: the per-row loss is one plan (a row gather: the row
pass computes log_softmax, the one-hot select and the sum over the row together) and the batch
reduction is one plan after it, also for a mean over the rows that ignore_index keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from dice_engine.arch import ARCHS
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.patterns import classify
from dice_engine.ir.row_gather import row_gathers
from dice_engine.kernelbench.lower import lower
from dice_engine.kernelbench.task import load_task
from dice_engine.kernelbench.trace import trace_task
from dice_engine.sketches.row_gather import RowGatherRows

TASK = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return {call}


def get_inputs():
    return [torch.randn(64, 10), torch.randint(0, 10, (64,))]


def get_init_inputs():
    return []
"""
F = "torch.nn.functional"


@pytest.mark.parametrize("call, plans", [
    (f"{F}.cross_entropy(predictions, targets)", 2),
    (f"{F}.cross_entropy(predictions, targets, reduction='sum', ignore_index=3)", 2),
    (f"{F}.cross_entropy(predictions, targets, reduction='none')", 1),
    (f"{F}.nll_loss(torch.log_softmax(predictions, 1), targets, ignore_index=2)", 2),
])
def test_the_row_loss_is_one_plan_and_its_reduction_another(call: str, plans: int, tmp_path: Path) -> None:
    path = tmp_path / "task.py"
    path.write_text(TASK.format(call=call))
    lowered = lower(trace_task(load_task(path)))
    assert len(lowered.plans) == plans
    first = lowered.plans[0]
    assert len(row_gathers(first.expr)) == 1
    decls = {n.name: TensorDecl(n.name, n.dtype, n.shape) for n in first.leaves()}
    problem = classify(Program(decls, first.out.name, first.expr))
    assert RowGatherRows().unsupported(problem, ARCHS["sm_90"]) is None
