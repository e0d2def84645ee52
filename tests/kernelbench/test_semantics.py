"""The lowering means what the task means: the kernel plans, run in order through the IR's
float64 reference evaluator (views as reshapes of the same storage), give PyTorch's result for
the task's Model on seeded inputs. This checks tracing, the ATen table, the compositions and
the partition on CPU; the generated CUDA is checked against the same meaning on a GPU."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.reference import evaluate
from dice_engine.kernelbench.lower import lower
from dice_engine.kernelbench.task import load_task
from dice_engine.kernelbench.trace import trace_task

from .conftest import TASKS


def run_plans(stem: str, seed: int = 0) -> tuple[list[np.ndarray], list[torch.Tensor], list[str]]:
    task = load_task(TASKS / f"{stem}.py")
    lowered = lower(trace_task(task))
    torch.manual_seed(seed)
    model = task.model_class(*task.get_init_inputs())
    inputs = task.get_inputs()
    scope = {"self": model, **dict(zip(lowered.traced.forward_params, inputs))}
    storage: dict[str, np.ndarray] = {}
    for b in lowered.buffers.values():
        if b.kind != "temp" and b.storage not in storage:
            storage[b.storage] = eval(b.storage, scope).detach().numpy()  # the writer's own expressions

    def value(name: str) -> np.ndarray:
        b = lowered.buffers[name]
        return storage[b.storage].reshape(-1)[b.offset:b.offset + int(np.prod(b.shape))].reshape(b.shape)

    for plan in lowered.plans:
        leaves = plan.leaves()
        decls = {n.name: TensorDecl(n.name, n.dtype, n.shape) for n in leaves}
        program = Program(decls, plan.out.name, plan.expr)
        storage[plan.out.storage] = np.asarray(evaluate(program, {n.name: value(n.name) for n in leaves}))
    expected = float64_truth(model, inputs)
    ops = [o.op for p in lowered.plans for o in p.operations()]
    return [value(b.name) for b in lowered.outputs], expected, ops


def float64_truth(model: torch.nn.Module, inputs: list) -> list[torch.Tensor]:
    """The model's outputs, computed in float64 where the task is fp32: PyTorch's own fp32 result
    differs from the exact one by its rounding, which on a long sum with cancellation exceeds the
    tolerance and depends on the CPU's BLAS path. fp16/bf16 tasks keep their own dtype."""
    wide = all(t.dtype != torch.float16 and t.dtype != torch.bfloat16
               for t in [*inputs, *model.parameters(), *model.buffers()] if torch.is_tensor(t))
    with torch.no_grad():
        if wide:
            model = copy.deepcopy(model).double()
            inputs = [t.double() if torch.is_tensor(t) and t.dtype == torch.float32 else t for t in inputs]
        outputs = model(*inputs)
    outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    return [o.float() if wide and o.dtype == torch.float64 else o for o in outputs]


@pytest.mark.parametrize(
    "stem",
    [
        "scaled_relu",
        "linear_gelu",
        "conv_relu_pool",
        "variance_rows",
        "norms_and_pools",
        "losses",
        "batched_shapes",
        "scalar_input",
        "constant_tensor",
        "constant_on_input_device",
        "attention",
        "conv_windows",
        "conv_depthwise_pools",
        "scans_masks_einsum",
        "class_losses",
        "weighted_losses_same_pad",
        "lookups",
        "unfold_upsample",
    ],
)
def test_plans_compute_what_the_model_computes(stem):
    got, expected, _ = run_plans(stem)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == tuple(e.shape)
        np.testing.assert_allclose(g, e.numpy(), rtol=2e-4, atol=2e-5)


def test_view_lowered_operators_are_all_served():
    _, _, ops = run_plans("norms_and_pools")
    for op in (
        "aten.conv1d",
        "aten.max_pool1d",
        "aten.group_norm",
        "aten.layer_norm",
        "aten.batch_norm",
        "aten.logsumexp",
    ):
        assert op in ops


@pytest.mark.parametrize(
    "stem, mapped",
    [
        ("conv_windows", ["aten.conv3d", "aten.conv_transpose3d", "aten.conv_transpose1d",
                          "aten.max_pool3d", "aten.avg_pool3d"]),
        ("conv_depthwise_pools", ["aten.conv2d", "aten.conv_transpose2d", "aten.avg_pool2d",
                                  "aten.conv1d", "aten.max_pool1d"]),
        ("scans_masks_einsum", ["aten.cumprod", "aten.flip", "aten.triu", "aten.tril", "aten.einsum"]),
        ("class_losses", ["aten.cross_entropy_loss", "aten.nll_loss_nd"]),
    ],
)
def test_new_operators_are_lowered_by_their_own_mapping(stem, mapped):
    """The operators reach the IR through their handlers (not decomposed by the tracer first)."""
    _, _, ops = run_plans(stem)
    for op in mapped:
        assert op in ops, op
