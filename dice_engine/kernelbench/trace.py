"""Trace a task's `Model.forward` into an ATen graph without touching memory.

The model is built from `get_init_inputs()` and the inputs from `get_inputs()` as fake tensors
(PyTorch's FakeTensorMode), so parameters and inputs have shapes, dtypes and a real device but no
storage (KernelBench's tensors can be gigabytes). Unlike the meta device, a constant forward makes
on its input's device (`torch.tensor(0.0, device=x.device)`) keeps its value. `torch.export`
then records the forward as ATen operators; Python scalars and module attributes are folded into
the operators' arguments, parameters and buffers become placeholders named by their state-dict
keys.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

from .task import Task, TaskError

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\w+)')


@dataclass
class Placeholder:
    """One graph input: a forward argument, a parameter, a buffer or a lifted constant."""

    node: Any  # torch.fx.Node
    kind: str  # "input" | "parameter" | "buffer" | "constant"
    target: str  # forward argument name, or the state-dict key / attribute path
    value: Any = None  # a lifted constant's tensor (torch.tensor(...) made inside forward)


@dataclass
class Traced:
    task: Task
    graph: Any  # torch.fx.Graph
    placeholders: list[Placeholder]
    forward_params: list[str]
    scalars: dict[str, Any]  # forward's non-tensor arguments, as traced (folded into the kernels)

    def line_of(self, node: Any) -> int | None:
        """The line of the task file (inside forward) that produced `node`, or None."""
        trace = node.meta.get("stack_trace") or ""
        line = None
        for m in _FRAME.finditer(trace):
            if m.group("file") == str(self.task.path):
                line = int(m.group("line"))
        return line

    def source_line(self, line: int | None) -> str:
        if line is None:
            return ""
        lines = self.task.source.splitlines()
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""


_KINDS = {"USER_INPUT": "input", "PARAMETER": "parameter", "BUFFER": "buffer", "CONSTANT_TENSOR": "constant"}


def trace_task(task: Task) -> Traced:
    import torch

    try:
        model, inputs = _build_fake(task)
    except Exception as e:  # the task's own constructor or input code failed
        raise TaskError(
            f"building Model or its inputs failed: {type(e).__name__}: {_first_line(e)}"
        ) from None
    if not isinstance(model, torch.nn.Module):
        raise TaskError("Model(*get_init_inputs()) is not a torch.nn.Module")
    try:
        with warnings.catch_warnings():   # torch's advice about the model is not ours to print: one line out
            warnings.simplefilter("ignore")
            exported = torch.export.export(model, tuple(inputs), strict=False)
    except Exception as e:  # torch's tracer: data-dependent control flow, unsupported Python, ...
        raise TaskError(f"tracing Model.forward failed: {type(e).__name__}: {_first_line(e)}") from None
    specs = exported.graph_signature.input_specs
    by_name = {n.name: n for n in exported.graph.nodes if n.op == "placeholder"}
    placeholders: list[Placeholder] = []
    scalars: dict[str, Any] = {}
    user = 0  # forward's arguments come in order among the specs (export renames them: A -> a)
    for spec in specs:
        kind = _KINDS.get(spec.kind.name)
        name = getattr(spec.arg, "name", None)
        if kind == "input":
            if user >= len(task.forward_params):
                raise TaskError("forward takes more inputs than its signature names")
            param = task.forward_params[user]
            user += 1
            node = by_name.get(name)
            value = node.meta.get("val") if node is not None else getattr(spec.arg, "value", None)
            if node is None or not isinstance(value, torch.Tensor):
                scalars[param] = value  # a Python value: export folded it into the graph
                continue
            placeholders.append(Placeholder(node, kind, param))
            continue
        if kind is None or name not in by_name:
            raise TaskError(
                f"forward takes an input torch.export calls {spec.kind.name}, which DICE does not handle"
            )
        value = exported.constants.get(spec.target) if kind == "constant" else None
        placeholders.append(Placeholder(by_name[name], kind, spec.target, value))
    for spec in exported.graph_signature.output_specs:
        if spec.kind.name != "USER_OUTPUT":
            raise TaskError(
                f"forward has a result torch.export calls {spec.kind.name}, which DICE does not handle"
            )
    return Traced(task, exported.graph, placeholders, task.forward_params, scalars)


def _build_fake(task: Task) -> tuple[Any, list[Any]]:
    """The model and its inputs as fake tensors. A constructor that converts its own parameters
    (`self.half()`, `.to(torch.bfloat16)`) cannot run in FakeTensorMode, whose tensors refuse the
    swap `Module._apply` does; such a model is built with real parameters (their values are never
    read, and a task's parameters are small beside its inputs) while the inputs stay fake."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    try:
        with mode:
            model = task.model_class(*list(task.get_init_inputs()))
    except RuntimeError as e:
        if "swap" not in str(e):
            raise
        model = task.model_class(*list(task.get_init_inputs()))
    with mode:
        inputs = list(task.get_inputs())
    return model, inputs


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
