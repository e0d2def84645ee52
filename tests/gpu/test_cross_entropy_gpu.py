"""cross_entropy / nll_loss translated by `dice kernelbench` and run beside PyTorch: the per-row
loss is one row-gather kernel (one read of the logits), the batch reduction a small kernel
after it. The ModelNew output must be no further from the float64 model than PyTorch's own
float32 result (with a margin), and KernelBench's protocol must pass; the timings are printed.
Skips without a GPU."""

from __future__ import annotations

import importlib.util
import shutil

import pytest
import torch

from dice_engine.kernelbench import translate

pytestmark = pytest.mark.gpu

HEAD = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return {call}


def get_inputs():
    targets = torch.randint(0, {classes}, ({rows},))
    {ignore}
    return [torch.randn({rows}, {classes}) * 3, targets]


def get_init_inputs():
    return []
"""
TASKS = {   # name: (call, rows, classes, every how many rows a target is ignore_index; 0: none)
    "l1_95_mean": ("torch.nn.functional.cross_entropy(predictions, targets)", 32768, 4096, 0),
    "mean_ignored": ("torch.nn.functional.cross_entropy(predictions, targets)", 4096, 1000, 7),
    "sum_ignored": ("torch.nn.functional.cross_entropy(predictions, targets, reduction='sum')", 8192, 513, 5),
    "nll_none": ("torch.nn.functional.nll_loss(torch.log_softmax(predictions, 1), targets, reduction='none')",
                 2048, 30000, 3),
}


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not torch.cuda.is_available() or shutil.which("nvcc") is None,
                    reason="needs torch with a CUDA GPU and nvcc")
@pytest.mark.parametrize("name", list(TASKS))
def test_cross_entropy_matches_pytorch_on_the_gpu(name, tmp_path) -> None:
    from dice_engine.kernelbench.evaluate import evaluate

    call, rows, classes, every = TASKS[name]
    task = tmp_path / f"{name}.py"
    ignore = f"targets[::{every}] = -100" if every else "pass"
    task.write_text(HEAD.format(call=call, rows=rows, classes=classes, ignore=ignore))
    translation = translate(task, arch="sm_90", budget=8)
    print("\n".join(translation.report()))
    assert translation.kernels[0].result.sketch == "row_gather.rows", translation.report()
    new = tmp_path / f"{name}_dice.py"
    new.write_text(translation.text)
    module = _load(new)
    dice = module.ModelNew().cuda()
    model = module.Model().cuda()
    torch.manual_seed(1)
    inputs = [x.cuda() for x in module.get_inputs()]
    with torch.no_grad():
        got = dice(*inputs).double()
        want = model(inputs[0].double(), inputs[1])
        torch32 = model(*inputs).double()
    dice_error = (got - want).abs().max().item()
    torch_error = (torch32 - want).abs().max().item()
    print(f"{name}: max |error| vs float64: DICE {dice_error:.3e}, PyTorch float32 {torch_error:.3e}")
    assert dice_error <= max(2.0 * torch_error, 1e-5), (dice_error, torch_error)
    result = evaluate(str(task), str(new), trials=50)
    print(f"{name}: KernelBench protocol {result}")
    assert result["correct"] is True, result["message"]
