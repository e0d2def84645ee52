"""The ATen → IR mappings for the operators the IR gained (3-D and transposed and grouped
convolutions, pools with every option, cumprod, flip, triu/tril, class losses, einsum): their
uses the IR has no form for are refused with one line naming the operator and the line of
forward; the served ones compile for sm_90 with real nvcc. Their meaning is checked against
PyTorch in test_semantics.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dice_engine.kernelbench import Unmapped, translate
from dice_engine.kernelbench.lower import lower
from dice_engine.kernelbench.task import load_task
from dice_engine.kernelbench.trace import trace_task

from .conftest import TASKS

TASK = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {params}):
        return {call}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
"""


def _task(tmp_path: Path, call: str, inputs: str) -> Path:
    """A task whose forward takes x0, x1, ... (one per input) and returns `call` (XS: all of them)."""
    path = tmp_path / "task.py"
    params = ", ".join(f"x{i}" for i in range(inputs.count("torch.rand")))
    path.write_text(TASK.format(call=call.replace("XS", params), inputs=inputs, params=params))
    return path


@pytest.mark.parametrize(
    "call, inputs, op, why",
    [
        ('torch.einsum("...ij,jk->...ik", XS)', "torch.randn(2, 3, 4), torch.randn(4, 5)",
         "aten.einsum", "ellipsis"),
        ('torch.einsum("ii->i", XS)', "torch.randn(4, 4)", "aten.einsum", "repeated letter"),
        ('torch.einsum("ij,jk,kl->il", XS)', "torch.randn(2, 3), torch.randn(3, 4), torch.randn(4, 5)",
         "aten.einsum", "3 operands"),
        ("torch.nn.functional.cross_entropy(XS, weight=torch.ones(5), label_smoothing=0.1)",
         "torch.randn(8, 5), torch.randint(0, 5, (8,))", "aten.cross_entropy_loss",
         "both class weights and label smoothing"),
        ("torch.nn.functional.avg_pool3d(x0, 2, divisor_override=3)", "torch.randn(1, 2, 4, 4, 4)",
         "aten.avg_pool3d", "divisor_override"),
        ("torch.nn.functional.conv_transpose2d(x0, x1, stride=2, output_padding=2)",
         "torch.randn(1, 2, 5, 5), torch.randn(2, 3, 3, 3)", "aten.conv_transpose2d", "output_padding"),
    ],
)
def test_uses_without_an_ir_form_are_refused_in_one_line(tmp_path, call, inputs, op, why):
    with pytest.raises(Unmapped) as e:
        lower(trace_task(load_task(_task(tmp_path, call, inputs))))
    message = str(e.value)
    assert e.value.op == op and e.value.line == 10, message
    assert why in message and "\n" not in message


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("stem", ["conv_windows", "scans_masks_einsum", "class_losses",
                                  "weighted_losses_same_pad", "lookups", "unfold_upsample"])
def test_new_mappings_give_a_model_new_that_compiles_for_sm_90(stem, tmp_path):
    translation = translate(TASKS / f"{stem}.py", arch="sm_90", budget=1)  # compiles every kernel together
    assert translation.kernels and "class ModelNew" in translation.text
