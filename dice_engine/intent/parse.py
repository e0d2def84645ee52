"""`parse_intent`: one entry point for both intent forms, plus caller overrides.

The tensor form is chosen when any statement reads as a declaration (`x: f32[...]`) or a tensor
assignment (`y = ...`); everything else is words. Overrides from the API caller win over what
the text says. Low-precision matmul/conv programs get `accumulate=f32` unless they say otherwise
(f16/bf16 inputs and output, f32 accumulation, which is what PyTorch does on GPUs).
"""
from __future__ import annotations

import re
from typing import Any

from ..ir.dtypes import parse_dtype
from ..ir.graph import Program
from ..ir.patterns import heavy_nodes
from .errors import IntentError
from .lexer import statement_spans
from .options import OPTION_KEYS, TF32, merge_options, normalize_option
from .sizes import check_sizes
from .tensor_form import parse_tensor_form
from .words import parse_words

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DECLARATION = re.compile(rf"\s*{_NAME}(?:\s*,\s*{_NAME})*\s*:\s*(?P<dtype>{_NAME})\s*(?P<bracket>\[)?")
_ASSIGNMENT = re.compile(rf"\s*(?P<target>{_NAME})\s*=(?!=)\s*(?P<value>.*)", re.DOTALL)
_NUMBER = re.compile(r"\s*[\d.]+\s*")


def is_tensor_form(text: str) -> bool:
    """Whether some statement of `text` is a declaration or a tensor assignment."""
    for start, end in statement_spans(text):
        statement = text[start:end]
        decl = _DECLARATION.match(statement)
        if decl and (decl.group("bracket") or (parse_dtype(decl.group("dtype")) is not None
                                               and not statement[decl.end():].strip())):
            return True
        assign = _ASSIGNMENT.match(statement)
        if assign and assign.group("target") not in OPTION_KEYS \
                and not _NUMBER.fullmatch(assign.group("value")):
            return True
    return False


def parse_intent(text: str, *, default_shape: tuple[int, ...] | None = None, **overrides: Any) -> Program:
    """The program an intent asks for.

    `overrides` (precision=, arch=, gpu=, name=, budget=, goal=, accumulate=, layout=, hints=,
    and symbol values such as N=8192) win over the text. `default_shape` is the size a words
    intent gets when it names an operation but no size (e.g. a matmul "with shared memory"): the
    editor never passes one, so there such an intent is an error saying what is missing; an API
    caller may choose one explicitly.
    """
    precision = None
    if overrides.get("precision") is not None and str(overrides["precision"]).lower() != TF32:
        precision = parse_dtype(str(overrides["precision"]))
        if precision is None or not precision.is_float:
            raise IntentError(f"unknown precision {overrides['precision']!r} (use fp32, fp16 or bf16)",
                              0, len(text))
    try:
        if is_tensor_form(text):
            program = parse_tensor_form(text, precision)
        else:
            program = parse_words(text, precision=precision, default_shape=default_shape)
    except RecursionError:   # the parser bounds nesting; this is the net under what it cannot see
        raise IntentError("the intent is nested too deeply to read; split it into several "
                          "statements", 0, len(text)) from None
    _apply_overrides(program, overrides)
    check_sizes(program)
    if "precision" not in program.options and _asks_for_tf32(program):
        program.options["precision"] = TF32
    if "accumulate" not in program.options and any(
            n.op in ("matmul", "conv2d") and n.dtype.is_low_precision for n in program.output.walk()):
        program.options["accumulate"] = "f32"
    return program


def _asks_for_tf32(program: Program) -> bool:
    """An f32 matrix product whose words ask for tensor cores or TF32 ("TF32", "张量核心")."""
    hints = program.options.get("hints", "").split(",")
    return ("tensor_cores" in hints or TF32 in hints) and any(
        n.op == "matmul" and n.args[0].dtype.name == "f32" for n in program.output.walk())


def _apply_overrides(program: Program, overrides: dict[str, Any]) -> None:
    for key, value in overrides.items():
        if value is None:
            continue
        if key in program.symbols:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise IntentError(f"symbol {key} must be a positive integer, got {value!r}",
                                  0, len(program.text))
            program.symbols[key] = value
            continue
        if key not in OPTION_KEYS:
            raise IntentError(f"unknown option '{key}' (options: {', '.join(OPTION_KEYS)}; "
                              f"symbols: {', '.join(program.symbols) or 'none'})", 0, len(program.text))
        try:
            merge_options(program.options, normalize_option(key, str(value)))
        except ValueError as e:
            raise IntentError(str(e), 0, len(program.text)) from None


def default_kernel_name(program: Program) -> str:
    """A C identifier for the kernel: the `name=` option, else operator, dtype and output shape."""
    if "name" in program.options:
        return program.options["name"]
    heavy = heavy_nodes(program)
    anchor = heavy[0] if heavy else program.output
    dtype = next(iter(program.inputs.values())).dtype if program.inputs else anchor.dtype
    op = anchor.op if heavy else "map"
    dims = "x".join(str(d) for d in program.output.shape) or "scalar"
    return re.sub(r"\W", "_", f"{op}_{dtype}_{dims}")
