"""`precision`: arithmetic that silently runs in double inside float code, low-precision
accumulators, and lossy atomicAdd targets.

In CUDA C++ `exp`, `sqrt`, `sin`… applied to a `float` resolve to the float overloads, so those
are not findings; what is: an unsuffixed floating literal meeting a float operand (the float is
promoted and the operation runs in double), and generic math calls whose arguments make overload
resolution pick double (`pow(float, int)`, `pow(x, 2.0)`). Explicitly declared `double`
variables are deliberate and never flagged.
"""
from __future__ import annotations

from bisect import bisect_left

from tree_sitter import Node

from .rule import Context, Rule
from .findings import Finding, Fix
from .report import finding, replace
from .syntax import FIELD, LOW_PRECISION, LOW_PRECISION_PAIRS, NARROW_INTEGERS, WIDE_INTEGERS, Function, \
    Source, float_literal_type, int_literal, operator, text, walk
from .types import GENERIC_MATH, Typer, is_floating, is_integer

ARITHMETIC = frozenset({"+", "-", "*", "/"})
# a comparison promotes its float operand like arithmetic does: it runs as a double compare
COMPARISONS = frozenset({"<", ">", "<=", ">=", "==", "!="})
COMPOUND = frozenset({"+=", "-=", "*=", "/="})
LOOPS = frozenset({"for_statement", "while_statement", "do_statement"})
ATOMIC_ADDS = frozenset({"atomicAdd", "atomicAdd_block", "atomicAdd_system"})


def precision_findings(src: Source, fn: Function, typer: Typer,
                       found: dict[str, list[Node]]) -> list[Finding]:
    """`found`: the function body's `syntax.captures`; `typer`: its types."""
    out: list[Finding] = []
    hints = _literal_hints(fn, typer.facts.double_macros)
    if hints:
        for node in found.get("binary", ()):
            if _may_hold_floating_literal(node, hints):
                out += _promoting_literals(src, typer, node)
    # only a variable declared half/bf16 can be a low-precision accumulator, and its type's name
    # is in the function's text
    low_precision_vars = (b"half" in fn.code or b"bfloat16" in fn.code) and \
        any(t in LOW_PRECISION or t in LOW_PRECISION_PAIRS for t in typer.vars.values())
    doubles = b"double" in fn.code     # a float accumulator of doubles needs a double in sight
    for node in found.get("assign", ()):
        if hints and _may_hold_floating_literal(node, hints):
            out += _compound_literal(src, typer, node)
        if low_precision_vars:
            out += _low_precision_accumulator(src, typer, node, fn.body)
        if doubles:
            out += _narrowing_accumulator(src, typer, node, fn.body)
    for node in found.get("call", ()):
        callee = text(node.child_by_field_id(FIELD.function))
        if callee in ATOMIC_ADDS:
            out += _atomic_target(src, typer, node)
        else:
            out += _math_call(src, typer, node, callee.split("::")[-1])
    return out


# every floating literal has a digit next to its point, exponent or binary exponent (`1.0`, `.5`,
# `1e3`, `0x1p4`), and most index arithmetic has no such pair. Mapping digits to "0" and exponent
# letters to "e" makes finding the pairs three substring searches over the function's text, far
# cheaper than a regular expression or reading each node's text.
_LITERAL_SHAPE = bytes.maketrans(b"0123456789eEpP", b"0000000000eeee")
_LITERAL_PAIRS = (b"0.", b".0", b"0e")


def _literal_hints(fn: Function, double_macros: dict[str, str]) -> list[int]:
    """File offsets of every digit/point/exponent pair in `fn` (where a floating literal may be)
    and of every mention of a macro that stands for a double literal, sorted."""
    shape = fn.code.translate(_LITERAL_SHAPE)
    start = fn.node.start_byte
    hints: list[int] = []
    for pair in _LITERAL_PAIRS:
        at = shape.find(pair)
        while at >= 0:
            hints.append(start + at)
            at = shape.find(pair, at + 1)
    for name in double_macros:
        key = name.encode()
        at = fn.code.find(key)
        while at >= 0:
            hints.append(start + at)
            at = fn.code.find(key, at + 1)
    return sorted(hints)


def _may_hold_floating_literal(node: Node, hints: list[int]) -> bool:
    """Whether one of the pairs at `hints` lies inside `node`."""
    first = bisect_left(hints, node.start_byte)
    return first < len(hints) and hints[first] + 2 <= node.end_byte


def _in_loop(node: Node, body: Node) -> bool:
    parent = node.parent
    while parent is not None and parent != body:
        if parent.type in LOOPS:
            return True
        parent = parent.parent
    return False


def _constant_double(typer: Typer, node: Node) -> list[Node] | None:
    """The double literals of a constant expression of type double (`0.5`, `(1.0 / 3.0)`), or None
    when `node` is not such an expression. A macro that stands for a double literal counts as one."""
    if node.type == "number_literal":
        return [node] if float_literal_type(text(node)) == "double" else None
    if node.type == "identifier":
        name = text(node)
        return [node] if name in typer.facts.double_macros and name not in typer.vars else None
    if node.type == "parenthesized_expression" and node.named_children:
        return _constant_double(typer, node.named_children[-1])
    if node.type == "unary_expression":
        return _constant_double(typer, node.child_by_field_id(FIELD.argument))
    if node.type == "binary_expression":
        parts = [node.child_by_field_id(FIELD.left), node.child_by_field_id(FIELD.right)]
        lits: list[Node] = []
        for p in parts:
            if p is None:
                return None
            if p.type == "number_literal" and float_literal_type(text(p)) is None:
                continue
            inner = _constant_double(typer, p)
            if inner is None:
                return None
            lits += inner
        return lits or None
    return None


def _suffix_fix(src: Source, literals: list[Node]) -> Fix | None:
    """Suffixes the literals written here; a macro's literal is left to its `#define`, which
    other code may use as a double."""
    edits = tuple(replace(src, lit, _float_literal(text(lit)))
                  for lit in literals if lit.type == "number_literal")
    return Fix("Make the literal float (add `f`)", edits) if edits else None


def _float_literal(s: str) -> str:
    return s + "f"


def _promoting_literals(src: Source, typer: Typer, node: Node) -> list[Finding]:
    op = operator(node)
    if op not in ARITHMETIC and op not in COMPARISONS:
        return []
    left, right = node.child_by_field_id(FIELD.left), node.child_by_field_id(FIELD.right)
    out = []
    for lit_side, other in ((left, right), (right, left)):
        if lit_side is None or other is None:
            continue
        lits = _constant_double(typer, lit_side)
        if not lits or _constant_double(typer, other) is not None:
            continue
        other_type = typer.type_of(other)
        if other_type == "float" or other_type in LOW_PRECISION:
            out.append(_literal_finding(src, typer, lit_side, lits, f"`{text(other)}` ({other_type})"))
    return out


def _compound_literal(src: Source, typer: Typer, node: Node) -> list[Finding]:
    op = operator(node)
    right = node.child_by_field_id(FIELD.right)
    if op not in COMPOUND or right is None:
        return []
    lits = _constant_double(typer, right)
    target = typer.type_of(node.child_by_field_id(FIELD.left))
    if not lits or not (target == "float" or target in LOW_PRECISION):
        return []
    left = text(node.child_by_field_id(FIELD.left))
    return [_literal_finding(src, typer, right, lits, f"`{left}` ({target})")]


def _literal_finding(src: Source, typer: Typer, where: Node, lits: list[Node],
                     operand: str) -> Finding:
    macros = typer.facts.double_macros
    shown = ", ".join(f"`{text(x)}`" if x.type == "number_literal" else
                      f"`{text(x)}` (a macro for `{macros[text(x)]}`)" for x in lits)
    msg = (f"{shown} is a double literal, so {operand} is converted to double and this operation "
           "runs in double precision (up to 64x slower on GPUs with few FP64 units) before being "
           "rounded back. Write it as a float literal: "
           + ", ".join(f"`{_float_literal(text(x) if x.type == 'number_literal' else macros[text(x)])}`"
                       for x in lits) + ".")
    return finding(src, where, "DICE-P001", msg, fix=_suffix_fix(src, lits))


def _math_call(src: Source, typer: Typer, node: Node, name: str) -> list[Finding]:
    """`name`: the called function, namespace dropped."""
    if name not in GENERIC_MATH or name in ("abs", "max", "min"):
        return []
    args = typer.args(node)
    types = [typer.type_of(a) for a in args]
    if not any(t == "float" or t in LOW_PRECISION for t in types):
        return []
    doubles = [a for a, t in zip(args, types) if t == "double"]
    if any(_constant_double(typer, a) is None for a in doubles):
        return []      # a computed double argument: deliberate, or already reported as DICE-P001
    int_exponent = name == "pow" and len(args) == 2 and is_integer(types[1])
    if not doubles and not int_exponent:
        return []
    fix = _pow_fix(src, node, args) if name == "pow" else None
    why = ("an integer exponent" if not doubles else
           "a double argument " + ", ".join(f"`{text(a)}`" for a in doubles))
    msg = (f"`{name}` with a float and {why} resolves to the double overload: the float is "
           "converted, the function runs in double precision (slow on most GPUs) and the result "
           "is rounded back. " + (f"Use {fix.title.split(': ', 1)[-1]}." if fix else
                                  f"Use `{name}f` with float arguments."))
    return [finding(src, node, "DICE-P002", msg, fix=fix)]


def _pow_fix(src: Source, node: Node, args: list[Node]) -> Fix | None:
    if len(args) != 2:
        return None
    base, exp = args
    exponent = text(exp)
    k = int_literal(exponent)
    if k is None and float_literal_type(exponent) == "double":
        try:
            value = float(exponent.rstrip("lL"))
            k = int(value) if value.is_integer() else None
        except ValueError:
            k = None
    simple = base.type in ("identifier", "subscript_expression", "field_expression") and \
        "++" not in text(base) and "--" not in text(base) and "(" not in text(base)
    if k in (2, 3) and simple:
        product = " * ".join([text(base)] * k)
        return Fix(f"Replace with multiplication: `{product}`", (replace(src, node, f"({product})"),))
    if k is not None:
        new = f"powf({text(base)}, {float(k)!r}f)"
    elif float_literal_type(exponent) == "double":
        new = f"powf({text(base)}, {exponent}f)"
    else:
        new = f"powf({text(base)}, (float)({exponent}))"
    return Fix(f"Use the float overload: `{new}`", (replace(src, node, new),))


def _low_precision_accumulator(src: Source, typer: Typer, node: Node, body: Node) -> list[Finding]:
    left = node.child_by_field_id(FIELD.left)
    right = node.child_by_field_id(FIELD.right)
    op = operator(node)
    if left is None or left.type != "identifier" or right is None:
        return []
    target = typer.type_of(left)
    if (target not in LOW_PRECISION and target not in LOW_PRECISION_PAIRS) or not _in_loop(node, body):
        return []
    name = text(left)
    accumulates = op in ("+=", "-=") or (
        op == "=" and any(c.type == "identifier" and text(c) == name for c in walk(right))
        and any(tok in text(right) for tok in ("+", "__hadd", "__hfma", "fma", "__hsub")))
    if not accumulates:
        return []
    msg = (f"`{name}` is a {target} accumulator updated in a loop: every addition rounds to "
           f"{11 if 'half' in target else 8} significant bits, so long sums stall and lose "
           "accuracy (adding small terms to a large total changes nothing). Accumulate in `float` and "
           f"convert to {target} once at the end.")
    return [finding(src, node, "DICE-P003", msg)]


def _narrowing_accumulator(src: Source, typer: Typer, node: Node, body: Node) -> list[Finding]:
    """`acc += v` in a loop with a float `acc` and a double `v` (data or a computed value, not a
    literal: that is DICE-P001's): each step rounds the double sum back to float."""
    left, right = node.child_by_field_id(FIELD.left), node.child_by_field_id(FIELD.right)
    if left is None or left.type != "identifier" or right is None or operator(node) not in ("+=", "-="):
        return []
    if typer.type_of(left) != "float" or typer.type_of(right) != "double" or not _in_loop(node, body):
        return []
    if _constant_double(typer, right) is not None:
        return []
    name = text(left)
    msg = (f"`{name}` is a float accumulator of double values (`{text(right)}`): every step adds in double "
           "and rounds the running sum back to float's 24 significant bits, so the doubles' precision is "
           "lost and long sums drift. Accumulate in `double` and convert once at the end (or read the "
           "data as float on purpose).")
    return [finding(src, node, "DICE-P005", msg)]


def _atomic_target(src: Source, typer: Typer, node: Node) -> list[Finding]:
    """`node`: a call of one of the ATOMIC_ADDS."""
    args = typer.args(node)
    if len(args) != 2:
        return []
    target_expr, value = args
    target = None
    if target_expr.type == "pointer_expression" and operator(target_expr) == "&":
        target = typer.type_of(target_expr.child_by_field_id(FIELD.argument))
    elif target_expr.type == "identifier":
        target = typer.pointers.get(text(target_expr))
    vtype = typer.type_of(value)
    if target is None or vtype is None:
        return []
    if (target in NARROW_INTEGERS or target in WIDE_INTEGERS) and is_floating(vtype):
        why = (f"the {vtype} value is truncated to the {target} target on every add, so fractions "
               "are lost")
    elif target in LOW_PRECISION and vtype != target:
        why = (f"the {vtype} value is rounded to {target} and accumulated there, so every add "
               "loses precision and large sums stall")
    elif target == "float" and vtype == "double" and _constant_double(typer, value) is None:
        why = "the double value is rounded to float before the add"
    else:
        return []
    msg = (f"atomicAdd target is `{target}`: {why}. Accumulate into a float (or double) buffer and "
           "convert once, or make the value the target's type on purpose.")
    return [finding(src, node, "DICE-P004", msg)]


def _check(ctx: Context) -> list[Finding]:
    return precision_findings(ctx.src, ctx.fn, ctx.typer, ctx.found)


RULE = Rule("precision", ('DICE-P001', 'DICE-P002', 'DICE-P003', 'DICE-P004', 'DICE-P005'), _check)
