"""Static C types of expressions inside one function, enough for the precision and overflow
analyses: declared types of parameters and locals, literal types, element types of subscripts,
CUDA builtins, math-function overload resolution and the usual arithmetic conversions."""
from __future__ import annotations

from functools import cached_property

from tree_sitter import Node

from .syntax import FIELD, LOW_PRECISION, NARROW_INTEGERS, VECTOR_COMPONENTS, WIDE_INTEGERS, FileFacts, \
    Function, base_type, float_literal_type, operator, text

FLOATING_RANK = {"double": 3, "long double": 3, "float": 2, "half": 1, "__half": 1,
                 "__nv_bfloat16": 1, "nv_bfloat16": 1}
# generic math functions whose overload follows the argument type (float → float in CUDA C++)
GENERIC_MATH = frozenset({
    "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "rsqrt",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "pow", "fabs", "floor", "ceil", "trunc", "round", "rint", "fmod", "fmax", "fmin",
    "fma", "erf", "erfc", "erfinv", "hypot", "copysign", "lgamma", "tgamma", "abs", "max", "min"})


class Typer:
    """Types inside one function. The declared names are collected on first use: the analyses
    ask only about functions that hold something they look for."""

    def __init__(self, fn: Function, facts: FileFacts, declarations: list[Node]) -> None:
        self.facts = facts
        self._fn = fn
        self._declarations = declarations

    @property
    def vars(self) -> dict[str, str]:
        return self._declared[0]

    @property
    def pointers(self) -> dict[str, str]:
        """name → element type (pointers and arrays)"""
        return self._declared[1]

    @cached_property
    def _declared(self) -> tuple[dict[str, str], dict[str, str]]:
        """(vars, pointers) of the parameters and the local declarations."""
        scalars: dict[str, str] = {}
        pointers: dict[str, str] = {}
        for name, type_name, indirect in self._fn.params:
            (pointers if indirect else scalars)[name] = type_name
        for node in self._declarations:
            t = base_type(node)
            for d in node.children_by_field_id(FIELD.declarator):
                name, indirect = _declared_name(d)
                if name is not None:
                    (pointers if indirect else scalars)[name] = t
        return scalars, pointers

    def type_of(self, node: Node | None) -> str | None:
        if node is None:
            return None
        t = node.type
        if t == "number_literal":
            return float_literal_type(text(node)) or ("long long" if text(node).lower().endswith("ll")
                                                       else "int")
        if t == "identifier":
            name = text(node)
            if name in self.vars:
                return self.vars[name]
            return "int" if name in self.facts.constants else None
        if t == "parenthesized_expression":
            inner = node.named_children
            return self.type_of(inner[-1]) if inner else None
        if t == "field_expression":
            base = text(node.child_by_field_id(FIELD.argument))
            if base in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
                return "unsigned int"
            owner = self._owner_type(node.child_by_field_id(FIELD.argument))
            field = text(node.child_by_field_id(FIELD.field))
            if owner in VECTOR_COMPONENTS:
                return VECTOR_COMPONENTS[owner]
            for fname, ftype in self.facts.structs.get(owner or "", ()):
                if fname == field:
                    return ftype
            return None
        if t == "subscript_expression":
            return self.element_type(node.child_by_field_id(FIELD.argument))
        if t == "pointer_expression":
            if operator(node) == "*":
                return self.element_type(node.child_by_field_id(FIELD.argument))
            return None
        if t == "cast_expression":
            td = node.child_by_field_id(FIELD.type)
            return None if td is None or "*" in text(td) else " ".join(text(td).replace("const", "").split())
        if t in ("binary_expression",):
            op = operator(node)
            if op in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
                return "bool"
            lt = self.type_of(node.child_by_field_id(FIELD.left))
            rt = self.type_of(node.child_by_field_id(FIELD.right))
            return common_type(lt, rt)
        if t == "unary_expression":
            return "bool" if operator(node) == "!" else \
                self.type_of(node.child_by_field_id(FIELD.argument))
        if t in ("assignment_expression",):
            return self.type_of(node.child_by_field_id(FIELD.left))
        if t == "update_expression":
            return self.type_of(node.child_by_field_id(FIELD.argument))
        if t == "conditional_expression":
            return common_type(self.type_of(node.child_by_field_id(FIELD.consequence)),
                               self.type_of(node.child_by_field_id(FIELD.alternative)))
        if t == "call_expression":
            return self.call_type(node)
        return None

    def _owner_type(self, node: Node | None) -> str | None:
        if node is None:
            return None
        if node.type == "identifier":
            return self.vars.get(text(node))
        return self.type_of(node)

    def element_type(self, node: Node | None) -> str | None:
        while node is not None and node.type == "subscript_expression":
            node = node.child_by_field_id(FIELD.argument)
        if node is None:
            return None
        if node.type == "identifier":
            return self.pointers.get(text(node))
        if node.type == "parenthesized_expression" and node.named_children:
            return self.element_type(node.named_children[-1])
        if node.type == "binary_expression":
            return self.element_type(node.child_by_field_id(FIELD.left)) or \
                self.element_type(node.child_by_field_id(FIELD.right))
        return None

    def call_type(self, node: Node) -> str | None:
        fnode = node.child_by_field_id(FIELD.function)
        if fnode is not None and fnode.type == "template_function":
            name = text(fnode.child_by_field_id(FIELD.name))
            if name in ("static_cast", "reinterpret_cast"):
                target = text(fnode.child_by_field_id(FIELD.arguments)).strip("<> ")
                return None if "*" in target else target
            return None
        name = text(fnode).split("::")[-1]
        args = self.args(node)
        if name in GENERIC_MATH:
            resolved = math_overload(name, [self.type_of(a) for a in args])
            return resolved
        if name in ("__half2float", "__bfloat162float", "__int2float_rn", "__fdividef", "rsqrtf"):
            return "float"
        if name in ("__float2half", "__float2half_rn", "__hadd", "__hmul", "__hfma", "__hsub"):
            return "half"
        if name.startswith("__float2bfloat16"):
            return "__nv_bfloat16"
        if name.endswith("f") and name[:-1] in GENERIC_MATH or name.startswith("__f") or \
                name in ("__expf", "__logf", "__sinf", "__cosf", "__powf", "__tanf", "__saturatef"):
            return "float"
        if name in ("__shfl_sync", "__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync") and len(args) > 1:
            return self.type_of(args[1])
        return None

    @staticmethod
    def args(node: Node) -> list[Node]:
        a = node.child_by_field_id(FIELD.arguments)
        return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def _declared_name(d: Node | None) -> tuple[str | None, bool]:
    """The identifier a local declarator declares (None if it has none) and whether it is a
    pointer or array."""
    indirect = False
    while d is not None and d.type != "identifier":
        if d.type in ("pointer_declarator", "array_declarator"):
            indirect = True
        d = d.child_by_field_id(FIELD.declarator)
    return (text(d) if d is not None else None), indirect


def is_floating(t: str | None) -> bool:
    return t in FLOATING_RANK


def is_integer(t: str | None) -> bool:
    return t in NARROW_INTEGERS or t in WIDE_INTEGERS


def common_type(a: str | None, b: str | None) -> str | None:
    """The usual arithmetic conversions (half/bf16 with float computes in float)."""
    if a is None or b is None:
        known = a or b
        return known if known in ("double", "long double") else None
    ra, rb = FLOATING_RANK.get(a, 0), FLOATING_RANK.get(b, 0)
    if ra or rb:
        if ra == rb:
            return a
        winner = a if ra > rb else b
        return "float" if winner in LOW_PRECISION and (ra and rb) else winner
    if a in WIDE_INTEGERS or b in WIDE_INTEGERS:
        return a if a in WIDE_INTEGERS else b
    if "unsigned" in a or "unsigned" in b:
        return "unsigned int"
    return "int"


def math_overload(name: str, arg_types: list[str | None]) -> str | None:
    """The overload a generic math call resolves to. `pow(float, int)` is the double overload
    (C++11 promotes mixed arithmetic arguments to double)."""
    if any(t in ("double", "long double") for t in arg_types):
        return "double"
    floats = [t for t in arg_types if t in ("float",) or t in LOW_PRECISION]
    if not floats:
        return "double" if any(is_integer(t) for t in arg_types) and name not in ("abs", "max", "min") \
            else None
    if name == "pow" and any(is_integer(t) for t in arg_types):
        return "double"
    return "float"
