"""Refuses intents whose tensors cannot fit in any GPU's memory (`x: f32[100000000000]` is
400 GB), saying how much they need, instead of generating a kernel that can never run."""
from __future__ import annotations

import math
import re

from ..arch.tables import LARGEST_GPU_MEMORY_BYTES
from ..ir.graph import Program, Shape
from .errors import IntentError


def _bytes(program: Program, shape: Shape, itemsize: int) -> int | None:
    """Bytes of a tensor of `shape`, or None while a symbol in it is bound only at run time."""
    dims = [d if isinstance(d, int) else program.symbols.get(d) for d in shape]
    return None if any(d is None for d in dims) else math.prod(dims) * itemsize


def _size(n: int) -> str:
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _span(text: str, name: str) -> tuple[int, int]:
    """Where `name`'s declaration is (tensor form), else the longest number (words), else all."""
    decl = re.search(rf"(?<![\w]){re.escape(name)}\b[\w\s,]*:\s*\w+\s*\[[^\]]*\]", text)
    if decl:
        return decl.span()
    numbers = list(re.finditer(r"\d[\d_,]*", text))
    if numbers:
        return max(numbers, key=lambda m: len(m.group())).span()
    return 0, len(text.rstrip())


def check_sizes(program: Program) -> None:
    """Raise IntentError when the inputs and output together exceed the largest GPU's memory."""
    sizes = {decl.name: _bytes(program, decl.shape, decl.dtype.size) for decl in program.inputs.values()}
    sizes[program.output_name] = _bytes(program, program.output.shape, program.output.dtype.size)
    known = {name: n for name, n in sizes.items() if n is not None}
    total = sum(known.values())
    if total <= LARGEST_GPU_MEMORY_BYTES:
        return
    name = max(known, key=known.__getitem__)
    where = _span(program.text, name if name in program.inputs else "")
    raise IntentError(f"these tensors need {_size(total)} ({name} alone {_size(known[name])}), more than "
                      f"any GPU's memory (the largest DICE targets, B200, has "
                      f"{_size(LARGEST_GPU_MEMORY_BYTES)}); use smaller sizes", *where)
