"""`overflow`: linear indices computed in 32 bits for extents that can exceed 2^31.

Two shapes, each needing evidence from the file that the extent really can be that large:
- DICE-O001: a 32-bit index variable that is compared with a 64-bit extent (`int i …; if (i < n)`
  with `size_t n`), or whose product of file constants and constant-bounded variables can reach
  2^31, or a product of run-time sizes in a file whose comments state more than 2^31 elements
  (`// 64 images of 8192 x 8192`, `a 2048^3 grid`, `~3.1e9 elements`);
- DICE-O002: a 64-bit index whose initializer multiplies 32-bit grid quantities
  (`size_t i = blockIdx.x * blockDim.x + …`), or 32-bit values whose product can reach 2^31 by the
  same bounds as DICE-O001 (`long long base = (n * C + c) * HW`): it wraps before it is widened.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from .findings import Finding, Fix, TextEdit
from .report import finding, replace
from .rule import Context, Rule
from .syntax import FIELD, NARROW_INTEGERS, WIDE_INTEGERS, Source, const_eval, operator, text, walk
from .types import Typer

LIMIT = 1 << 31
BUILTIN_MAX = {"threadIdx": 1023, "blockDim": 1024}
BOUNDED_OPERATORS = frozenset({"+", "*", "/", ">>", "%", "&"})   # those `_max_value` bounds


@dataclass(frozen=True)
class _Sizes:
    """What bounds an index in one kernel: integer constants (the file's, and the values its
    launch sites pass to its parameters) and the largest value of each grid builtin."""
    constants: dict[str, int]
    builtins: dict[str, int]


def overflow_findings(ctx: Context) -> list[Finding]:
    src, typer, found = ctx.src, ctx.typer, ctx.found
    definitions = list(_index_definitions(found.get("decl", []), typer))
    products = list(_products(definitions + list(_index_assignments(found.get("assign", []), typer))))
    offsets = _pointer_offsets(ctx, typer)
    indices = _subscript_indices(ctx, typer) + offsets
    if not products and not indices:        # only an index built from a product can overflow
        return []
    sizes = _sizes(ctx)
    # a peak needs every variable of the index bounded: when no 32-bit index has one even with
    # all variables bounded, the constant bounds of the variables are not collected
    boundable = any(_max_value(init, sizes, _any_bound) is not None for (_, _, _, init), _ in products) or \
        any(_max_value(index, sizes, _any_bound) is not None for index in indices)
    bounds, wide_compared = _comparisons(found, typer, sizes, boundable)
    if boundable:
        for _, name, _, init in definitions:
            if name not in bounds and (peak := _max_value(init, sizes, bounds.get)) is not None:
                bounds[name] = peak              # `int x = threadIdx.x` is at most 1023
    # comment-stated sizes speak of the whole data: only the widest linearizations of the kernel
    # (the most run-time sizes multiplied) can reach them, not a plane's or a row's offset
    stated = _stated(ctx)
    factors = {n.id: _size_factors(n) for n in [init for (_, _, _, init), _ in products] + indices} \
        if stated else {}
    widest = max(factors.values(), default=0)
    out: list[Finding] = []
    for (decl, name, type_name, init), product in products:
        if type_name in NARROW_INTEGERS:
            compared = wide_compared.get(name)
            peak = _max_value(init, sizes, bounds.get)
            if compared is None and (peak is None or peak < LIMIT) and \
                    not (peak is None and widest and factors[init.id] == widest):
                continue
            why = compared or (f"its product can reach {peak:,} (> 2^31 − 1)" if peak is not None else stated)
            fix = None if name in _decremented(found) else _widen_fix(src, decl, init, product)
            msg = (f"`{name}` is a 32-bit `{type_name}` index built from `{text(product)}`, but {why}: "
                   "the product wraps and the kernel reads and writes out of bounds. Declare it "
                   "`size_t` (or `long long`) and widen the first factor before multiplying.")
            out.append(finding(src, init, "DICE-O001", msg, fix=fix, data={"variable": name}))
        elif type_name in WIDE_INTEGERS and _narrow_product(product, typer):
            if _spans_grid(product):
                why = "past 2^32 threads the product wraps"
            elif boundable and (peak := _max_value(product, sizes, bounds.get)) is not None and peak >= LIMIT:
                why = f"it can reach {peak:,} (> 2^31 − 1), so it wraps"
            else:
                continue
            fix = Fix(f"Widen before multiplying: `({type_name}){text(_first_factor(product))} * …`",
                      (_cast_edit(src, product, type_name),))
            msg = (f"`{text(product)}` is computed in 32-bit arithmetic and only then widened to "
                   f"`{type_name}`: {why} and `{name}` points at the wrong element. Cast the first factor: "
                   f"`({type_name}){text(_first_factor(product))} * …`.")
            out.append(finding(src, product, "DICE-O002", msg, fix=fix, data={"variable": name}))
    peaks: dict[str, int | None] = {}        # by spelling: `a[i * n + j]` recurs in a kernel
    for index in indices:
        spelling = ctx.facts.text(index)
        if spelling not in peaks:
            peaks[spelling] = _max_value(index, sizes, bounds.get)
        peak = peaks[spelling]
        unbounded_but_stated = widest and factors[index.id] == widest
        if (peak is None and not unbounded_but_stated) or (peak is not None and peak < LIMIT):
            continue
        what = "pointer offset" if any(index.id == o.id for o in offsets) else "index"
        reach = f"can reach {peak:,} (> 2^31 − 1)" if peak is not None else f"runs over sizes where {stated}"
        msg = (f"The {what} `{text(index)}` is computed in 32-bit `int` arithmetic and {reach}: it wraps "
               "and the access lands out of bounds. Widen the first factor (`(size_t)`) so the whole "
               "product is computed in 64 bits.")
        fix = Fix("Widen the index to size_t", (_cast_edit(src, _product_in(index), "size_t"),))
        out.append(finding(src, index, "DICE-O001", msg, fix=fix, data={"variable": text(index)}))
    return out


def _size_factors(node: Node) -> int:
    """How many factors of the products in `node` are neither grid builtins nor literals: run-time
    sizes a linearization multiplies by (`b * h * w`: 3; one axis's thread coordinate: 0)."""
    found = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "binary_expression" and operator(n) == "*":
            for side in (n.child_by_field_id(FIELD.left), n.child_by_field_id(FIELD.right)):
                if not _grid_or_literal(side) and side is not None and side.type != "binary_expression":
                    found.add(text(side))
        stack.extend(n.named_children)
    return len(found)


def _grid_or_literal(node: Node | None) -> bool:
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[-1]
    if node is None or node.type == "number_literal":
        return True
    return node.type == "field_expression" and text(node.child_by_field_id(FIELD.argument)) in \
        ("blockIdx", "blockDim", "gridDim", "threadIdx")


def _stated(ctx: Context) -> str | None:
    """Why the file's comments say an index can pass 2^31, or None (`FileFacts.stated_elements`)."""
    stated = ctx.facts.stated_elements
    if stated is None or stated[0] < LIMIT:
        return None
    return f"a comment (line {stated[1] + 1}) speaks of {stated[0]:,} elements (> 2^31 − 1)"


def _sizes(ctx: Context) -> _Sizes:
    builtins: dict[str, int] = {}
    block = ctx.facts.block_sizes.get(ctx.fn.name)
    for axis, position in (("x", 0), ("y", 1), ("z", 2)):
        if block is not None:
            builtins[f"blockDim.{axis}"] = block[position]
            builtins[f"threadIdx.{axis}"] = block[position] - 1
        if ctx.launch.grid is not None:
            builtins[f"gridDim.{axis}"] = ctx.launch.grid[position]
            builtins[f"blockIdx.{axis}"] = ctx.launch.grid[position] - 1
    return _Sizes(ctx.constants, builtins)


def _subscript_indices(ctx: Context, typer: Typer) -> list[Node]:
    """The 32-bit index expressions of subscripts that multiply (`x[(n * C + c) * H + h]`)."""
    out = []
    text_of = ctx.facts.text
    known: dict[str, bool] = {}
    for n in ctx.found.get("index", ()):
        if n.named_child_count != 1:
            continue
        spelling = text_of(n)
        keep = known.get(spelling)
        if keep is None:
            index = n.named_children[0]
            keep = known[spelling] = "*" in spelling and _first_product(index) is not None and \
                typer.type_of(index) in NARROW_INTEGERS
        if keep:
            out.append(n.named_children[0])
    return out


def _pointer_offsets(ctx: Context, typer: Typer) -> list[Node]:
    """The 32-bit offsets that multiply and are added to a pointer (`C + b * m * n`, a per-batch
    base): they wrap exactly as a subscript's index does."""
    out = []
    for n in ctx.found.get("binary", ()):
        op = operator(n)
        if op not in ("+", "-"):
            continue
        left, right = n.child_by_field_id(FIELD.left), n.child_by_field_id(FIELD.right)
        sides = ((left, right), (right, left)) if op == "+" else ((left, right),)
        for pointer, offset in sides:
            if pointer is None or offset is None or pointer.type != "identifier" \
                    or text(pointer) not in typer.pointers:
                continue
            if "*" in text(offset) and _first_product(offset) is not None \
                    and typer.type_of(offset) in NARROW_INTEGERS:
                out.append(offset)
    return out


def _product_in(index: Node) -> Node:
    return _first_product(index) or index


def _index_definitions(declarations: list[Node], typer: Typer):
    """(declaration, name, type, initializer) for scalar variables with initializers; `auto`
    takes the initializer's type."""
    for node in declarations:
        t = " ".join(text(node.child_by_field_id(FIELD.type)).split())
        for d in node.children_by_field_id(FIELD.declarator):
            if d.type == "init_declarator":
                target = d.child_by_field_id(FIELD.declarator)
                value = d.child_by_field_id(FIELD.value)
                if target is not None and target.type == "identifier" and value is not None:
                    yield node, text(target), (typer.type_of(value) or t) if t == "auto" else t, value


def _index_assignments(assignments: list[Node], typer: Typer):
    """(assignment, name, declared type, value) for `idx = …;` of a declared integer variable."""
    for node in assignments:
        left = node.child_by_field_id(FIELD.left)
        value = node.child_by_field_id(FIELD.right)
        if operator(node) == "=" and left is not None and left.type == "identifier" and value is not None \
                and _first_product(value) is not None:
            type_name = typer.vars.get(text(left))
            if type_name is not None:
                yield node, text(left), type_name, value


def _products(definitions: list[tuple[Node, str, str, Node]]):
    """(definition, its first product) for the integer definitions that multiply."""
    for definition in definitions:
        type_name, init = definition[2], definition[3]
        if type_name not in NARROW_INTEGERS and type_name not in WIDE_INTEGERS:
            continue                             # floats, pointers: not an index
        product = _first_product(init)
        if product is not None:
            yield definition, product


def _first_product(node: Node) -> Node | None:
    stack = [node]
    while stack:
        n = stack.pop(0)
        if n.type == "binary_expression" and operator(n) == "*":
            return n
        if n.type in ("call_expression", "subscript_expression"):
            continue
        stack.extend(n.named_children)
    return None


def _first_factor(product: Node) -> Node:
    left = product.child_by_field_id(FIELD.left)
    while left is not None and left.type == "binary_expression" and \
            operator(left) == "*":
        left = left.child_by_field_id(FIELD.left)
    return left if left is not None else product


def _narrow_product(product: Node, typer: Typer) -> bool:
    """Every factor of `product` is 32-bit: no widening cast inside, so it is computed in 32 bits."""
    return all(typer.type_of(f) in NARROW_INTEGERS for f in _factors(product))


def _spans_grid(product: Node) -> bool:
    """A block index or grid extent is among the factors or inside one (`(blockIdx.x *
    blockDim.x + threadIdx.x) * 4`). Block-local products (`blockDim.x * threadIdx.x`) stay
    below 2^20."""
    return any(n.type == "field_expression" and text(n.child_by_field_id(FIELD.argument)) in
               ("blockIdx", "gridDim") for f in _factors(product) for n in walk(f))


def _factors(product: Node) -> list[Node]:
    factors = []
    stack = [product]
    while stack:
        n = stack.pop()
        if n.type == "binary_expression" and operator(n) == "*":
            stack += [n.child_by_field_id(FIELD.left), n.child_by_field_id(FIELD.right)]
        elif n.type == "parenthesized_expression" and n.named_children:
            stack.append(n.named_children[-1])
        else:
            factors.append(n)
    return factors


def _comparisons(found: dict[str, list[Node]], typer: Typer, sizes: _Sizes,
                 with_bounds: bool) -> tuple[dict[str, int], dict[str, str]]:
    """Constant upper bounds of variables (`x < C`; only `with_bounds`) and, per variable, why
    the extent it is compared with can pass 2^31: a 64-bit type, or a value known to."""
    bounds: dict[str, int] = {}
    wide: dict[str, str] = {}
    for node in found.get("binary", ()):
        op = operator(node)
        if op not in ("<", "<=", ">", ">="):        # most are arithmetic: their operands are not read
            continue
        left, right = node.child_by_field_id(FIELD.left), node.child_by_field_id(FIELD.right)
        if left is None or right is None:
            continue
        if op in (">", ">="):
            left, right = right, left
        if with_bounds:
            _bound_by(bounds, left, right, sizes)
            # `if (w >= W) return;`: a guard against the extent bounds the index past it
            _bound_by(bounds, right, left, sizes)
        terms = _index_terms(left)                  # `i < n`, `base + k < n`
        if not terms:
            continue
        if typer.type_of(right) in WIDE_INTEGERS:
            why = f"it is compared with the 64-bit `{text(right)}`, so the extent it indexes can exceed 2^31"
        elif (extent := const_eval(text(right), sizes.constants)) is not None and extent >= LIMIT:
            # `idx < N * C * H * W` with the sizes the launches pass: the index must count past 2^31
            why = f"it runs up to `{text(right)}` = {extent:,} (> 2^31 − 1)"
        else:
            continue
        for name in terms:
            wide.setdefault(name, why)
    return bounds, wide


def _bound_by(bounds: dict[str, int], index: Node, extent: Node, sizes: _Sizes) -> None:
    """Record `extent` as a bound of `index` (a variable, or a variable plus a constant)."""
    c = const_eval(text(extent), sizes.constants)
    if c is None:
        return
    if index.type == "binary_expression" and operator(index) == "+":
        offset = const_eval(text(index.child_by_field_id(FIELD.right)), sizes.constants)
        index = index.child_by_field_id(FIELD.left)
        if offset is None or index is None:
            return
        c -= offset                              # `z + 1 < nz`
    if index.type == "identifier":
        bounds[text(index)] = max(bounds.get(text(index), 0), c)


def _decremented(found: dict[str, list[Node]]) -> set[str]:
    """The variables that are decremented (not safe to make unsigned)."""
    out: set[str] = set()
    for node in found.get("update", ()):
        if operator(node) == "--":
            out.add(text(node.child_by_field_id(FIELD.argument)))
    for node in found.get("assign", ()):
        if operator(node) == "-=":
            out.add(text(node.child_by_field_id(FIELD.left)))
    return out


def _index_terms(node: Node) -> list[str]:
    """Variables added up in an index expression (not those inside subscripts or calls)."""
    if node.type == "identifier":
        return [text(node)]
    if node.type == "parenthesized_expression" and node.named_children:
        return _index_terms(node.named_children[-1])
    if node.type == "binary_expression" and operator(node) in ("+", "-"):
        left, right = node.child_by_field_id(FIELD.left), node.child_by_field_id(FIELD.right)
        return (_index_terms(left) if left else []) + (_index_terms(right) if right else [])
    return []


def _max_value(node: Node, sizes: _Sizes, bound: Callable[[str], int | None]) -> int | None:
    """Largest value of a non-negative index expression, or None when some part is unbounded.
    `bound`: a variable's upper bound, or None."""
    t = node.type
    if t == "number_literal":
        return const_eval(text(node), sizes.constants)
    if t == "identifier":
        name = text(node)
        if name in sizes.constants:
            return sizes.constants[name]
        return bound(name)
    if t == "field_expression":
        got = sizes.builtins.get(text(node))
        return got if got is not None else BUILTIN_MAX.get(text(node.child_by_field_id(FIELD.argument)))
    if t in ("parenthesized_expression", "cast_expression") and node.named_children:
        return _max_value(node.named_children[-1], sizes, bound)
    if t == "binary_expression":
        op = operator(node)
        if op not in BOUNDED_OPERATORS:
            return None
        right = node.child_by_field_id(FIELD.right)
        if op == "%":                            # `nc % C` stays below C whatever nc is
            b = _max_value(right, sizes, bound)
            return None if b is None else max(b - 1, 0)
        # one unbounded operand makes the whole unbounded: the other is not read
        a = _max_value(node.child_by_field_id(FIELD.left), sizes, bound)
        if a is None:
            return None
        if op == "/":                            # divided by a constant: that much smaller
            d = const_eval(text(right), sizes.constants)
            return a // d if d is not None and d > 0 else a
        b = _max_value(right, sizes, bound)
        if b is None:
            return None
        if op == "+":
            return a + b
        if op == "*":
            return a * b
        return a                                 # >> & never exceed the left operand
    return None


def _any_bound(_name: str) -> int:
    """Every variable bounded: what stays unbounded then (a block index, a load) always does."""
    return 1


def _cast_edit(src: Source, product: Node, type_name: str) -> TextEdit:
    first = _first_factor(product)
    l0, c0, _, _ = src.span(first)
    return TextEdit(l0, c0, l0, c0, f"({type_name})")


def _widen_fix(src: Source, decl: Node, init: Node, product: Node) -> Fix | None:
    type_node = decl.child_by_field_id(FIELD.type)
    if type_node is None or len(decl.children_by_field_id(FIELD.declarator)) != 1:
        return None
    return Fix("Widen the index to size_t",
               (replace(src, type_node, "size_t"), _cast_edit(src, product, "size_t")))


RULE = Rule("overflow", ("DICE-O001", "DICE-O002"), overflow_findings)
