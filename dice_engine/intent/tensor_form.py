"""The tensor form (design.md §1): statements → a `Program`.

Declarations give the inputs, `key=value` statements the options and symbol values, statements
in words a target GPU, goal or strategy hints ("one warp per row, on an A100"), and
assignments the computation: the last assigned name is the output, earlier ones are
intermediates inlined where used. Every problem is an `IntentError` with the range to underline.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir import ops, torch_expr
from ..ir.dtypes import ALIASES, DType, parse_dtype
from ..ir.graph import Dim, Node, Program, TensorDecl
from . import composites
from .errors import IntentError, did_you_mean
from .functions import FUNCTIONS, Arg, Value, bind
from .options import merge_options, normalize_option
from .unsupported import CAN_GENERATE, unsupported_function
from .words import annotations
from .syntax import (Assignment, Attribute, Binary, Call, Declaration, Expr, Literal, Name, OptionSetting,
                     Seq, Span, Unary, WordNote, parse_statements)

_BINARY_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow", "@": "matmul",
               "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne",
               "&": "logical_and", "|": "logical_or"}
_MODULE_PREFIXES = {"torch", "F", "nn", "functional", "Tensor"}


def parse_tensor_form(text: str, precision: DType | None = None) -> Program:
    """The program written in tensor form. `precision` replaces the dtype of floating inputs."""
    statements = parse_statements(text)
    options: dict[str, str] = {}
    for stmt in statements:
        if isinstance(stmt, WordNote):
            options.update(_word_note(text, stmt))
    for stmt in statements:
        if isinstance(stmt, OptionSetting):
            merge_options(options, _option(stmt))
    if precision is None and "precision" in options:
        precision = parse_dtype(options["precision"])

    decls = [s for s in statements if isinstance(s, Declaration)]
    inputs, decl_spans = _inputs(decls, precision)
    shape_symbols = {d for decl in inputs.values() for d in decl.shape if isinstance(d, str)}
    symbols: dict[str, int | None] = {s: None for s in _ordered_symbols(inputs)}
    assignments: list[Assignment] = []
    for stmt in statements:
        if isinstance(stmt, Assignment):
            if isinstance(stmt.value, Literal) and isinstance(stmt.value.value, int) \
                    and not isinstance(stmt.value.value, bool):
                symbols[_symbol(stmt, shape_symbols)] = stmt.value.value
            else:
                assignments.append(stmt)

    if not assignments:
        end = len(text.rstrip())
        raise IntentError("no output: add an assignment such as y = relu(x)", 0, end)
    builder = _Builder(inputs, text, symbols)
    for stmt in assignments:
        target = stmt.target
        if target.text in inputs:
            raise IntentError(f"'{target.text}' is a declared input; assign to a new name",
                              target.start, target.end)
        if target.text in shape_symbols:
            raise IntentError(f"'{target.text}' is a shape symbol; give it an integer value",
                              target.start, target.end)
        builder.assign(target, builder.tensor(stmt.value))

    output = assignments[-1].target
    for name, span in decl_spans.items():
        if name not in builder.used:
            raise IntentError(f"'{name}' is declared but not used", span.start, span.end)
    for name, span in builder.intermediates.items():
        if name != output.text and name not in builder.used:
            raise IntentError(f"'{name}' is computed but never used (the last assignment is the output)",
                              span.start, span.end)
    node = builder.env[output.text]
    if not any(n.op == "input" for n in node.walk()):
        raise IntentError("the output does not depend on any declared tensor",
                          assignments[-1].value.start, assignments[-1].value.end)
    return Program(inputs, output.text, node, symbols, options, text)


def _option(stmt: OptionSetting) -> dict[str, str]:
    try:
        return normalize_option(stmt.key.text, stmt.value.text)
    except ValueError as e:
        raise IntentError(str(e), stmt.value.start, stmt.value.end) from None


def _word_note(text: str, note: WordNote) -> dict[str, str]:
    found = annotations(text, note.start, note.end)
    if not found:
        raise IntentError("expected a declaration (x: f32[1024]), an assignment (y = ...), an option "
                          "(arch=sm_90), or words naming a target GPU, a goal or strategy hints",
                          note.start, note.end)
    return found


def _inputs(decls: list[Declaration],
            precision: DType | None) -> tuple[dict[str, TensorDecl], dict[str, Span]]:
    inputs: dict[str, TensorDecl] = {}
    spans: dict[str, Span] = {}
    for decl in decls:
        dtype = parse_dtype(decl.dtype.text)
        if dtype is None:
            raise IntentError.misspelt(f"unknown dtype '{decl.dtype.text}'", decl.dtype.text, ALIASES,
                                       decl.dtype.start, decl.dtype.end)
        if precision is not None and dtype.is_float:
            dtype = precision
        shape = tuple(_dim(d) for d in decl.dims or [])
        for name in decl.names:
            if name.text in inputs:
                raise IntentError(f"'{name.text}' is declared twice", name.start, name.end)
            if name.text in _MODULE_PREFIXES:
                raise IntentError(f"'{name.text}' names a module; choose another tensor name",
                                  name.start, name.end)
            inputs[name.text] = TensorDecl(name.text, dtype, shape)
            spans[name.text] = name
    return inputs, spans


def _dim(span: Span) -> Dim:
    if span.text.isdigit():
        if int(span.text) < 1:
            raise IntentError("a dimension must be at least 1", span.start, span.end)
        return int(span.text)
    if not span.text[0].isalpha() and span.text[0] != "_":
        raise IntentError(f"'{span.text}' is not a dimension (an integer or a symbol)", span.start, span.end)
    return span.text


def _ordered_symbols(inputs: dict[str, TensorDecl]) -> list[str]:
    out: list[str] = []
    for decl in inputs.values():
        out += [d for d in decl.shape if isinstance(d, str) and d not in out]
    return out


def _symbol(stmt: Assignment, shape_symbols: set[str]) -> str:
    name, value = stmt.target, stmt.value
    if name.text not in shape_symbols:
        raise IntentError.misspelt(f"{name.text}={value.value}: no declared shape uses '{name.text}'",
                                   name.text, shape_symbols, name.start, name.end)
    if value.value < 1:
        raise IntentError(f"symbol {name.text} must be a positive integer", value.start, value.end)
    return name.text


class _Builder:
    """Evaluates expressions to nodes over the declared inputs and earlier assignments."""

    def __init__(self, inputs: dict[str, TensorDecl], text: str = "",
                 symbols: dict[str, int | None] | None = None):
        self.text = text
        self.symbols = symbols or {}
        self.env: dict[str, Node] = {n: ops.input_tensor(n, d.dtype, d.shape) for n, d in inputs.items()}
        self.used: set[str] = set()
        self.intermediates: dict[str, Span] = {}

    def assign(self, target: Span, node: Node) -> None:
        self.env[target.text] = node
        self.intermediates[target.text] = target

    def tensor(self, expr: Expr) -> Node:
        value = self.value(expr)
        if isinstance(value, Node):
            return value
        if isinstance(value, (int, float)):
            return ops.const(value)
        raise IntentError(f"expected a tensor expression, got {value!r}", expr.start, expr.end)

    def value(self, expr: Expr) -> Value:
        if self.text and _beyond_library(expr):
            return self.torch_call(expr)
        if isinstance(expr, Literal):
            return expr.value
        if isinstance(expr, Name):
            return self.name(expr)
        if isinstance(expr, Seq):
            items = [self.value(e) for e in expr.items]
            for item, e in zip(items, expr.items):
                if isinstance(item, Node):
                    raise IntentError("a list here holds integers, not tensors", e.start, e.end)
            return tuple(items)
        if isinstance(expr, Unary):
            return self.unary(expr)
        if isinstance(expr, Binary):
            return self.binary(expr)
        if isinstance(expr, Attribute):
            return self.attribute(expr)
        if isinstance(expr, Call):
            return self.call(expr)
        raise IntentError("unsupported expression", expr.start, expr.end)

    def name(self, expr: Name) -> Value:
        if expr.id in self.env:
            self.used.add(expr.id)
            return self.env[expr.id]
        if parse_dtype(expr.id) is not None:
            return expr.id        # a dtype, as in x.to(f16)
        if expr.id in FUNCTIONS:
            raise IntentError(f"'{expr.id}' is a function; call it, e.g. {expr.id}(x)", expr.start, expr.end)
        raise IntentError.misspelt(f"unknown name '{expr.id}'", expr.id, self.env, expr.start, expr.end,
                                   otherwise=f"; declare it, e.g. {expr.id}: f32[1024]")

    def unary(self, expr: Unary) -> Value:
        operand = self.value(expr.operand)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool) and expr.op != "~":
            return -operand if expr.op == "-" else operand
        node = self.tensor(expr.operand)
        if expr.op == "+":
            return node
        op = "neg" if expr.op == "-" else "logical_not"
        try:
            return ops.make(op, [node])
        except ops.OpError as e:
            raise IntentError(str(e), expr.start, expr.end) from None

    def binary(self, expr: Binary) -> Node:
        op = _BINARY_OPS[expr.op]
        args = [self.tensor(expr.left), self.tensor(expr.right)]
        try:
            return composites.matmul(*args) if op == "matmul" else ops.make(op, args)
        except ops.OpError as e:
            blamed = [expr.left, expr.right][e.arg] if e.arg is not None else expr
            raise IntentError(str(e), blamed.start, blamed.end) from None

    def attribute(self, expr: Attribute) -> Node:
        if expr.attr in _RESULT_FIELDS and _reduces_with_indices(expr.value):
            return self.result_field(expr)
        x = self.tensor(expr.value)
        if expr.attr == "T":
            if x.rank <= 2:
                return ops.transpose(x, 0, 1)
            return ops.make("permute", [x], dims=tuple(reversed(range(x.rank))))
        if expr.attr == "mT":
            try:
                return ops.transpose(x, -2, -1)
            except ops.OpError as e:
                raise IntentError(str(e), expr.start, expr.end) from None
        raise IntentError(f"unknown attribute '.{expr.attr}' (only .T and .mT)", expr.attr_start, expr.end)

    def result_field(self, expr: Attribute) -> Node:
        """`max(x, dim=1).values` is the max reduction, `.indices` the argmax (min likewise), as
        torch's (values, indices) result of a reduction along one dim."""
        call = expr.value
        assert isinstance(call, Call)
        name, _, _, receiver = self.callee(call.func)
        if len(call.args) + (receiver is not None) < 2 and not any(k.name == "dim" for k in call.keywords):
            raise IntentError(f"{name}(x) without dim is a tensor: .{expr.attr} needs {name}(x, dim=...)",
                              expr.attr_start, expr.end)
        values = self.call(call)
        if values.op in ("maximum", "minimum"):
            raise IntentError(f"{name}(a, b) is the elementwise {values.op}, a tensor without .{expr.attr}",
                              expr.attr_start, expr.end)
        if expr.attr == "values":
            return values
        func = replace(call.func, attr=f"arg{name}") if isinstance(call.func, Attribute) else \
            Name(call.func.start, call.func.end, f"arg{name}")
        return self.call(replace(call, func=func))

    def call(self, expr: Call) -> Node:
        name, name_start, name_end, receiver = self.callee(expr.func)
        fn = FUNCTIONS.get(name)
        if fn is None:
            if (message := unsupported_function(name)) is not None:
                raise IntentError(message, name_start, name_end)
            raise IntentError.misspelt(f"unknown function '{name}'", name, FUNCTIONS, name_start, name_end,
                                       otherwise=f"; DICE generates {CAN_GENERATE}; any other PyTorch "
                                                 f"function is written torch.{name}(...)")
        positional = [Arg(self.value(a), a.start, a.end) for a in expr.args]
        if receiver is not None:
            positional.insert(0, Arg(self.tensor(receiver), receiver.start, receiver.end))
        keywords = {}
        for kw in expr.keywords:
            keywords[kw.name] = (Arg(self.value(kw.value), kw.value.start, kw.value.end), kw.start, kw.end)
        site = bind(name, fn, positional, keywords, expr.start, expr.end)
        return fn.handler(site)

    def torch_call(self, expr: Expr) -> Node:
        """An expression calling a torch function DICE has no operator for: PyTorch's meaning."""
        text = self.text[expr.start:expr.end]
        try:
            names = torch_expr.referenced_names(text)
        except torch_expr.TorchExprError as e:
            raise IntentError(str(e), expr.start, expr.end) from None
        for name in names:
            if name not in self.env:
                hint = did_you_mean(name, self.env)
                raise IntentError(f"unknown name '{name}' in a torch expression{hint}", expr.start, expr.end)
        self.used.update(names)
        try:
            return ops.torch_call(text, names, [self.env[n] for n in names], self.symbols)
        except ops.OpError as e:
            raise IntentError(str(e), expr.start, expr.end) from None

    def callee(self, func: Expr) -> tuple[str, int, int, Expr | None]:
        """The function name, its range, and the receiver of a method call (x.sum(...)), if any."""
        if isinstance(func, Name):
            return func.id, func.start, func.end, None
        if isinstance(func, Attribute):
            start = func.attr_start
            if _is_module_path(func.value):
                return func.attr, start, func.end, None
            return func.attr, start, func.end, func.value
        raise IntentError("this cannot be called", func.start, func.end)


def _beyond_library(expr: Expr) -> bool:
    """Whether `expr` calls a torch function (torch.topk, x.unfold) or reads a field of a call's
    result (.values) that the operator library does not have. A plain unknown name stays an error
    (likely a typo)."""
    if isinstance(expr, Call):
        func = expr.func
        if isinstance(func, Attribute):
            if func.attr not in FUNCTIONS:
                return True
            inner = [] if _is_module_path(func.value) else [func.value]
        else:
            inner = []
        return any(_beyond_library(e) for e in [*inner, *expr.args, *(k.value for k in expr.keywords)])
    if isinstance(expr, Attribute):   # a field of a call's result (.values); x.foo stays an error
        if expr.attr in _RESULT_FIELDS and _reduces_with_indices(expr.value):
            return _beyond_library(expr.value)
        return (expr.attr not in ("T", "mT") and isinstance(expr.value, Call)) or _beyond_library(expr.value)
    if isinstance(expr, Unary):
        return _beyond_library(expr.operand)
    if isinstance(expr, Binary):
        return _beyond_library(expr.left) or _beyond_library(expr.right)
    if isinstance(expr, Seq):
        return any(_beyond_library(e) for e in expr.items)
    return False


_RESULT_FIELDS = ("values", "indices")


def _reduces_with_indices(expr: Expr) -> bool:
    """A call of max or min (torch's reductions that return values and indices) on one tensor."""
    if not isinstance(expr, Call):
        return False
    func = expr.func
    name = func.id if isinstance(func, Name) else func.attr if isinstance(func, Attribute) else ""
    return name in ("max", "min")


def _is_module_path(expr: Expr) -> bool:
    """torch / F / torch.nn.functional: a namespace, not a tensor."""
    if isinstance(expr, Name):
        return expr.id in _MODULE_PREFIXES
    return isinstance(expr, Attribute) and expr.attr in _MODULE_PREFIXES and _is_module_path(expr.value)
