"""Eval-side guards against ModelNew files that game KernelBench's protocol.

Each guard is a small function that says why a run must not count (a one-line reason) or
returns None. Those that need no GPU are plain tensor/attribute checks; the stream guard and
the repeated-call guards are driven by the evaluation child (`eval_child.py`), which owns the
GPU. The runner's own guards (dice_engine/runner/) are kept apart on purpose, to be unified.

Hacks covered: timers or torch functions patched (`PatchGuard`), inputs mutated
(`mutated_inputs`), outputs aliased to inputs or parameters (`aliased_output`), a lower
precision or another dtype than the task's (`dtype_mismatch`), results cached across calls or
keyed on input pointers (the child re-runs on fresh values in the same and in new tensors),
work on another stream than the current one (the child delays the inputs on the current stream).
"""

from __future__ import annotations

from typing import Any, Iterable

# Callables a solution could patch to fake its timing or its correctness.
_WATCHED_MODULES = ("torch", "torch.cuda", "torch.nn.functional", "torch.testing", "time")
_WATCHED_CLASSES = ("torch.Tensor", "torch.cuda.Event", "torch.cuda.Stream", "torch.nn.Module")


def _resolve(dotted: str) -> Any:
    import importlib

    module, _, attr = dotted.rpartition(".")
    try:
        return importlib.import_module(dotted)
    except ImportError:
        return getattr(importlib.import_module(module), attr)


class PatchGuard:
    """Remembers the identity of every public callable of the timing and torch namespaces, and
    later names those that were replaced (monkey-patched) since."""

    def __init__(self) -> None:
        self.before = self._snapshot()

    @staticmethod
    def _snapshot() -> dict[str, int]:
        seen: dict[str, int] = {}
        for name in _WATCHED_MODULES + _WATCHED_CLASSES:
            owner = _resolve(name)
            for attr in dir(owner):
                if attr.startswith("_") and attr not in ("__call__", "__eq__"):
                    continue  # private names change under torch's own lazy initialisation
                try:
                    value = getattr(owner, attr)
                except Exception:  # some attributes raise on access; they cannot be patched usefully
                    continue
                if callable(value):
                    seen[f"{name}.{attr}"] = id(getattr(value, "__func__", value))
        return seen

    def patched(self) -> str | None:
        now = self._snapshot()
        changed = sorted(k for k, v in self.before.items() if now.get(k, v) != v)
        if changed:
            more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
            return f"the solution replaced {', '.join(changed[:3])}{more}"
        return None


def _span(t: Any) -> tuple[int, int]:
    start = t.data_ptr()
    return start, start + max(t.numel(), 1) * t.element_size()


def aliased_output(outputs: Iterable[Any], others: Iterable[Any]) -> str | None:
    """An output that shares memory with an input or a parameter (returned instead of computed)."""
    spans = [(i, _span(t)) for i, t in enumerate(others) if _is_tensor(t)]
    for j, out in enumerate(outputs):
        if not _is_tensor(out):
            continue
        lo, hi = _span(out)
        for i, (a, b) in spans:
            if lo < b and a < hi:
                return f"output {j} shares memory with input or parameter {i}"
    return None


def mutated_inputs(before: Iterable[Any], after: Iterable[Any]) -> str | None:
    """An input whose values forward changed (compared with a copy taken before the call)."""
    import torch

    for i, (b, a) in enumerate(zip(before, after)):
        if _is_tensor(b) and not torch.equal(b, a):
            return f"forward changed input {i} in place"
    return None


def dtype_mismatch(reference: Iterable[Any], outputs: Iterable[Any]) -> str | None:
    """An output of another dtype (a lower precision) or shape than the task's."""
    ref, out = list(reference), list(outputs)
    if len(ref) != len(out):
        return f"forward returned {len(out)} result(s), the task {len(ref)}"
    for i, (r, o) in enumerate(zip(ref, out)):
        if not _is_tensor(o):
            return f"result {i} is not a tensor"
        if o.dtype != r.dtype:
            return f"result {i} is {o.dtype}, the task's is {r.dtype}"
        if tuple(o.shape) != tuple(r.shape):
            return f"result {i} has shape {list(o.shape)}, the task's {list(r.shape)}"
    return None


def _is_tensor(t: Any) -> bool:
    import torch

    return isinstance(t, torch.Tensor)
