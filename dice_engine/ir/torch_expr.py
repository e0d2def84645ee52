"""Intents beyond the operator library: an expression that calls any `torch` function.

`y = torch.topk(x, 8, dim=1).values; x: f32[4096, 1024]` means what PyTorch computes. The
expression is held as text with the tensors it reads; its output shape and dtype come from
PyTorch itself (meta tensors, so nothing is computed), and the reference evaluator runs it on the
CPU. Only model backends write kernels for it (no sketch family serves the `torch` pattern).

The text comes from a file the user opened, so it is evaluated only after a whitelist check:
names, constants, calls, attribute access without underscores, subscripts, arithmetic; functions
from `torch`, `torch.nn.functional`, `torch.linalg`, `torch.fft`, `torch.special` and tensor
methods, minus those that touch files, devices, processes or global state.
"""
from __future__ import annotations

import ast
import functools
import math
from typing import Any

import numpy as np

from .dtypes import DTYPES, DType

NAMESPACES = {"torch", "F", "nn", "functional", "linalg", "fft", "special"}
# The modules whose functions may be called (a dotted path from a namespace name).
MODULES = {"torch", "F", "torch.nn.functional", "nn.functional", "functional", "torch.linalg", "linalg",
           "torch.fft", "fft", "torch.special", "special"}
# Reachable from the namespaces above but not pure functions of their arguments.
FORBIDDEN = {"load", "save", "hub", "from_file", "ops", "utils", "cuda", "distributed", "compile", "jit",
             "backends", "classes", "library", "package", "serialization", "multiprocessing", "export",
             "onnx", "fx", "autograd", "random", "manual_seed", "seed", "profiler", "storage",
             "UntypedStorage", "TypedStorage", "device", "set_default_device", "set_default_dtype",
             "use_deterministic_algorithms", "set_num_threads", "set_printoptions", "empty", "empty_like",
             "empty_strided", "rand", "randn", "randint", "rand_like", "randn_like", "randint_like",
             "bernoulli", "multinomial", "normal", "dropout", "numpy", "tolist", "item", "data_ptr",
             "share_memory_", "pin_memory", "to", "cpu", "register_hook", "backward", "apply_",
             "map_", "untyped_storage", "set_", "resize_"}
# Where tensors live and where results go are DICE's to decide (no CUDA in the editor's process).
FORBIDDEN_KEYWORDS = {"device", "out", "generator", "pin_memory", "memory_format", None}
_NODES = (ast.Expression, ast.Name, ast.Load, ast.Constant, ast.Call, ast.keyword, ast.Attribute,
          ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.UnaryOp, ast.BinOp, ast.Compare,
          ast.USub, ast.UAdd, ast.Not, ast.Invert, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv,
          ast.Mod, ast.Pow, ast.MatMult, ast.BitAnd, ast.BitOr, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
          ast.Eq, ast.NotEq)
MAX_OUTPUT_ELEMENTS = 1 << 32


class TorchExprError(ValueError):
    """The expression is not one DICE will evaluate, or PyTorch refused it."""


def referenced_names(text: str) -> list[str]:
    """The plain names `text` reads, in order of first use (namespaces excluded)."""
    tree = _parse(text)
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in NAMESPACES and node.id not in names:
            names.append(node.id)
    return names


def _parse(text: str) -> ast.Expression:
    try:
        tree = ast.parse(" ".join(text.split()), mode="eval")
    except SyntaxError as e:
        raise TorchExprError(f"not a Python expression: {e.msg}") from None
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner and (path := _module_path(node)):
            module = path.rpartition(".")[0]
            if module not in MODULES:
                allowed = ", ".join(sorted(MODULES))
                raise TorchExprError(f"'{path}': only functions of {allowed} may be called")
        if not isinstance(node, _NODES):
            raise TorchExprError(f"'{type(node).__name__}' is not allowed in a torch expression")
        if isinstance(node, ast.Attribute) and (node.attr.startswith("_") or node.attr in FORBIDDEN):
            raise TorchExprError(f"'.{node.attr}' is not allowed in a torch expression")
        if isinstance(node, ast.Name) and (node.id.startswith("_") or node.id in FORBIDDEN):
            raise TorchExprError(f"'{node.id}' is not allowed in a torch expression")
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and len(node.value) > 64:
            raise TorchExprError("string constants in a torch expression are limited to 64 characters")
        if isinstance(node, ast.BinOp):
            _check_arithmetic(node)
        if isinstance(node, ast.keyword) and node.arg in FORBIDDEN_KEYWORDS:
            what = "**" if node.arg is None else f"{node.arg}="
            raise TorchExprError(f"'{what}' is not allowed in a torch expression")
    return tree


def _check_arithmetic(node: ast.BinOp) -> None:
    """Python itself must not be made to compute something huge ('a' * 10**9, 10 ** 10 ** 10)."""
    for side in (node.left, node.right):
        if isinstance(side, (ast.List, ast.Tuple)) or (isinstance(side, ast.Constant)
                                                       and isinstance(side.value, (str, bytes))):
            raise TorchExprError("arithmetic on lists or strings is not allowed in a torch expression")
    exponent = node.right
    if isinstance(node.op, ast.Pow) and not any(isinstance(n, ast.Name) for n in ast.walk(exponent)):
        small = isinstance(exponent, ast.Constant) and isinstance(exponent.value, (int, float)) \
            and abs(exponent.value) <= 64
        if not small:
            raise TorchExprError("a constant exponent in a torch expression must be a number up to 64")


def _module_path(node: ast.expr) -> str | None:
    """`torch.nn.functional.softmax` as text when the chain starts at a namespace name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in NAMESPACES:
        return ".".join([node.id, *reversed(parts)])
    return None


def _namespace(torch: Any) -> dict[str, Any]:
    functional = torch.nn.functional
    return {"torch": torch, "F": functional, "nn": torch.nn, "functional": functional,
            "linalg": torch.linalg, "fft": torch.fft, "special": torch.special}


@functools.lru_cache(maxsize=64)
def _compiled(text: str) -> Any:
    return compile(_parse(text), "<intent>", "eval")


def run(text: str, tensors: dict[str, Any]) -> Any:
    """The tensor `text` gives over `tensors` (checked against the whitelist first)."""
    import torch

    code = _compiled(text)
    scope = {**_namespace(torch), **tensors}
    try:
        with torch.no_grad():
            value = eval(code, {"__builtins__": {}}, scope)  # noqa: S307 (whitelisted AST, no builtins)
    except (RuntimeError, TypeError, ValueError, IndexError, AttributeError, NameError,
            NotImplementedError) as e:
        raise TorchExprError(f"PyTorch: {' '.join(str(e).split())[:300]}") from None
    if not isinstance(value, torch.Tensor):
        raise TorchExprError(f"the expression gives a {type(value).__name__}, not a tensor "
                             "(pick one, e.g. .values)")
    return value


def dtype_of(torch_dtype: Any) -> DType:
    name = str(torch_dtype).removeprefix("torch.")
    found = next((d for d in DTYPES.values() if d.torch == name), None)
    if found is None:
        raise TorchExprError(f"the result's dtype {name} has no DICE equivalent")
    return found


def infer(text: str, inputs: dict[str, tuple[DType, tuple[int, ...]]]) -> tuple[DType, tuple[int, ...]]:
    """The output dtype and shape of `text` over tensors of the given dtypes and shapes."""
    import torch

    def make(device: str) -> dict[str, Any]:
        return {name: torch.zeros(shape, dtype=getattr(torch, dtype.torch), device=device)
                for name, (dtype, shape) in inputs.items()}

    # Meta tensors only: nothing is computed or allocated while an intent is parsed (the editor
    # parses on every keystroke). Operators without a meta kernel have data-dependent shapes,
    # which no fixed-shape kernel could serve anyway.
    with torch.device("meta"):           # tensors the expression itself creates, too
        value = run(text, make("meta"))
    if math.prod(value.shape) > MAX_OUTPUT_ELEMENTS:
        raise TorchExprError(f"the result has {math.prod(value.shape)} elements (at most "
                             f"{MAX_OUTPUT_ELEMENTS} are allowed)")
    return dtype_of(value.dtype), tuple(int(d) for d in value.shape)


def evaluate(text: str, arrays: dict[str, np.ndarray], dtypes: dict[str, DType]) -> np.ndarray:
    """PyTorch's value of `text` on the CPU. Floating inputs are widened to float64 as in the rest
    of the reference evaluator; integer and bool inputs keep their declared dtype."""
    import torch

    tensors = {}
    for name, array in arrays.items():
        dtype = dtypes[name]
        wanted = torch.float64 if dtype.is_float else getattr(torch, dtype.torch)
        tensors[name] = torch.from_numpy(np.ascontiguousarray(array)).to(wanted)
    value = run(text, tensors)
    return value.detach().contiguous().numpy()
