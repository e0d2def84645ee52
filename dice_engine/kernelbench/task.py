"""A KernelBench task file, loaded: its source, `Model`, `get_inputs` and `get_init_inputs`.

The file is executed as a module of its own (its name is its path, so tracebacks and the
tracer's stack traces point into it). Anything wrong with it is a `TaskError` of one line.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable


class TaskError(Exception):
    """The task file cannot be used; the message says why, on one line."""


@dataclass
class Task:
    path: Path
    source: str
    module: types.ModuleType
    model_class: type
    get_inputs: Callable[[], list[Any]]
    get_init_inputs: Callable[[], list[Any]]

    @property
    def forward_params(self) -> list[str]:
        """The names of `Model.forward`'s tensor parameters, in order (without self)."""
        sig = inspect.signature(self.model_class.forward)
        return [
            p.name
            for p in list(sig.parameters.values())[1:]
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]


def load_task(path: str | Path) -> Task:
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TaskError(f"cannot read {path}: {e.strerror if isinstance(e, OSError) else e}") from None
    module = types.ModuleType(f"dice_kernelbench_task_{abs(hash(str(path.resolve())))}")
    module.__file__ = str(path)
    try:
        code = compile(source, str(path), "exec")
        exec(code, module.__dict__)
    except SyntaxError as e:
        raise TaskError(f"line {e.lineno}: syntax error: {e.msg}") from None
    except Exception as e:  # the task's own module-level code failed
        raise TaskError(f"running the task file failed: {type(e).__name__}: {_one_line(e)}") from None
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in module.__dict__]
    if missing:
        raise TaskError(f"not a KernelBench task: it defines no {', '.join(missing)}")
    model_class = module.__dict__["Model"]
    if not isinstance(model_class, type):
        raise TaskError("Model is not a class")
    return Task(
        path, source, module, model_class, module.__dict__["get_inputs"], module.__dict__["get_init_inputs"]
    )


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split()) or type(e).__name__
