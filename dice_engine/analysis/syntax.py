"""Parsing CUDA with tree-sitter-cuda, and what every analysis needs from the tree: code-point
positions, the kernels and __device__ functions of a file, its constants, structs and launch
configurations.

tree-sitter reports byte columns; findings use code-point columns, so every range goes through
`Source.span`.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Iterator

from tree_sitter import Node, Parser, Query, QueryCursor, Tree

from .grammar import FIELD, LANGUAGE
from .preprocessor import CONDITIONALS, compiled_children

# The node kinds the analyses look for, found by tree-sitter in C rather than by walking in Python.
_NODES = Query(LANGUAGE, """
(call_expression) @call
(declaration) @decl
(binary_expression) @binary
(assignment_expression) @assign
(update_expression) @update
(subscript_argument_list) @index
""")


def captures(node: Node) -> dict[str, list[Node]]:
    """Calls, declarations, binary/assignment/update expressions and subscript indices under
    `node`, in document order."""
    return QueryCursor(_NODES).captures(node)


def new_parser() -> Parser:
    return Parser(LANGUAGE)


def encode(text: str | bytes) -> bytes:
    """The bytes tree-sitter parses. Lone surrogates (undecodable input read with
    surrogateescape) survive the round trip instead of raising."""
    if isinstance(text, bytes):
        return text
    return text.encode("utf-8", errors="surrogatepass")


class Source:
    """One file's bytes, with byte → code-point column conversion per line."""

    def __init__(self, data: bytes, path: str = "<buffer>") -> None:
        self.data = data
        self.path = path
        self.lines = data.split(b"\n")

    def column(self, row: int, byte_col: int) -> int:
        if row >= len(self.lines):
            return byte_col
        line = self.lines[row]
        if line.isascii():
            return byte_col
        return len(line[:byte_col].decode("utf-8", errors="replace"))

    def span(self, node: Node) -> tuple[int, int, int, int]:
        (r0, c0), (r1, c1) = node.start_point, node.end_point
        return r0, self.column(r0, c0), r1, self.column(r1, c1)


def byte_point(data: bytes, offset: int) -> tuple[int, int]:
    """The 0-based row and byte column of a byte offset into `data`."""
    return data.count(b"\n", 0, offset), offset - (data.rfind(b"\n", 0, offset) + 1)


def operator(node: Node) -> str:
    """The operator of a binary/unary/assignment/update expression (its node kind is the token,
    which is cheaper than decoding text)."""
    op = node.child_by_field_id(FIELD.operator)
    return op.type if op is not None else ""


def text(node: Node | None) -> str:
    raw = node.text if node is not None else None     # each `.text` slices the source anew: read once
    return raw.decode("utf-8", "replace") if raw else ""


# ---------------------------------------------------------------------------------------------
# Functions

class Function:
    """A function definition; parameters and launch bounds are read only when needed."""

    def __init__(self, node: Node, name: str, qualifiers: frozenset[str], body: Node,
                 declarator: Node) -> None:
        self.node = node
        self.name = name
        self.qualifiers = qualifiers
        self.body = body
        self._declarator = declarator

    @cached_property
    def code(self) -> bytes:
        """The definition's source text (read once: each `node.text` slices the file anew)."""
        return self.node.text or b""

    @property
    def is_kernel(self) -> bool:
        return "__global__" in self.qualifiers

    @property
    def is_device(self) -> bool:
        return "__device__" in self.qualifiers

    @cached_property
    def params(self) -> list[tuple[str, str, bool]]:
        """(name, base type, is pointer/array/reference) per parameter."""
        out: list[tuple[str, str, bool]] = []
        plist = self._declarator.child_by_field_id(FIELD.parameters)
        for p in plist.named_children if plist is not None else ():
            if p.type != "parameter_declaration":
                continue
            name, indirect = declarator_name(p.child_by_field_id(FIELD.declarator))
            if name:
                out.append((name, base_type(p), indirect))
        return out

    @cached_property
    def template_params(self) -> tuple[tuple[str, str | None], ...]:
        """(name, default as written) of each template parameter (types included, by name)."""
        parent = self.node.parent
        plist = parent.child_by_field_id(FIELD.parameters) if parent is not None and \
            parent.type == "template_declaration" else None
        out = []
        for p in plist.named_children if plist is not None else ():
            name = p.child_by_field_id(FIELD.declarator)
            default = p.child_by_field_id(FIELD.default_value)
            out.append((text(name) if name is not None else "",
                        text(default) if default is not None else None))
        return tuple(out)

    @cached_property
    def launch_bounds_args(self) -> tuple[str, ...] | None:
        """The arguments of `__launch_bounds__(...)` as written, None without one."""
        for c in self.node.children:
            if c.type == "launch_bounds":
                return tuple(text(n) for n in c.named_children)
        return None

    @cached_property
    def launch_bounds(self) -> int | None:
        """The maximum threads per block `__launch_bounds__` states, when a literal."""
        args = self.launch_bounds_args
        return int_literal(args[0]) if args else None

    def max_threads(self, constants: dict[str, int]) -> int | None:
        """`__launch_bounds__`'s maximum threads per block, read with the file's constants."""
        args = self.launch_bounds_args
        return const_eval(args[0], constants) if args else None


def declarator_name(decl: Node | None) -> tuple[str, bool]:
    """The identifier a declarator declares and whether it is a pointer, array or reference."""
    indirect = False
    while decl is not None and decl.type not in ("identifier", "field_identifier"):
        if decl.type in ("pointer_declarator", "array_declarator", "reference_declarator",
                         "abstract_pointer_declarator"):
            indirect = True
        nxt = decl.child_by_field_id(FIELD.declarator)
        if nxt is None:
            nxt = next((c for c in decl.named_children if c.type in
                        ("identifier", "pointer_declarator", "array_declarator",
                         "reference_declarator", "init_declarator", "function_declarator")), None)
        decl = nxt
    return (text(decl) if decl is not None else ""), indirect


def base_type(decl_node: Node) -> str:
    """The declared base type, without qualifiers (`const float` → "float")."""
    t = decl_node.child_by_field_id(FIELD.type)
    name = text(t)
    if t is not None and t.type == "sized_type_specifier":
        name = " ".join(name.split())
    return name.removeprefix("struct ").strip()


def functions(root: Node) -> list[Function]:
    out: list[Function] = []
    stack = list(reversed(root.children))
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            fn = _function(node)
            if fn is not None:
                out.append(fn)
        elif node.type in ("template_declaration", "namespace_definition", "declaration_list",
                           "linkage_specification", "preproc_if", "preproc_ifdef", "preproc_else",
                           "preproc_elif"):
            stack.extend(reversed(node.named_children))
    return out


def _function(node: Node) -> Function | None:
    body = node.child_by_field_id(FIELD.body)
    decl = node.child_by_field_id(FIELD.declarator)
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_id(FIELD.declarator)
    if body is None or decl is None:
        return None
    head = (node.text or b"")[: decl.start_byte - node.start_byte]
    quals = frozenset(q for q in ("__global__", "__device__", "__host__") if q.encode() in head)
    name_node = decl.child_by_field_id(FIELD.declarator)
    return Function(node, text(name_node).split("::")[-1], quals, body, decl)


# ---------------------------------------------------------------------------------------------
# Literals and file-level facts

_INT_RE = re.compile(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9][0-9']*)([uUlL]*)$")


def int_literal(s: str) -> int | None:
    m = _INT_RE.match(s.strip())
    if not m:
        return None
    digits = m.group(1).replace("'", "")
    try:
        if digits[:2] in ("0x", "0X"):
            return int(digits, 16)
        if digits[:2] in ("0b", "0B"):
            return int(digits[2:], 2)
        if len(digits) > 1 and digits[0] == "0":
            return int(digits, 8)
        return int(digits)
    except ValueError:
        return None


def float_literal_type(s: str) -> str | None:
    """"double"/"float"/"half" for a floating literal, None for an integer literal."""
    s = s.strip().replace("'", "")
    if s[:2] in ("0x", "0X"):
        if "p" not in s and "P" not in s:
            return None
    elif not any(ch in s for ch in ".eE"):
        return None
    if s[-1] in "fF":
        return "float"
    if s[-1] in "lL":
        return "long double"
    return "double"


PRIMITIVE_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2,
    "half": 2, "__half": 2, "__nv_bfloat16": 2, "nv_bfloat16": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4, "float": 4,
    "__half2": 4, "half2": 4, "__nv_bfloat162": 4, "char4": 4, "uchar4": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8, "int64_t": 8,
    "uint64_t": 8, "size_t": 8, "ptrdiff_t": 8, "double": 8, "float2": 8, "int2": 8,
    "float3": 12, "int3": 12, "float4": 16, "int4": 16, "double2": 16, "uint4": 16,
}
PRIMITIVE_ALIGN = {"float3": 4, "int3": 4, "char4": 4, "uchar4": 4}   # others: their size
# vector types whose .x/.y/.z/.w the analyses read as fields of this component type
VECTOR_COMPONENTS = {"float2": "float", "float3": "float", "float4": "float", "double2": "double",
                     "int2": "int", "int3": "int", "int4": "int"}
WIDE_INTEGERS = frozenset({"long", "unsigned long", "long long", "unsigned long long", "int64_t",
                           "uint64_t", "size_t", "ptrdiff_t", "long int", "long long int",
                           "unsigned long long int", "long unsigned int", "ssize_t"})
NARROW_INTEGERS = frozenset({"int", "unsigned", "unsigned int", "int32_t", "uint32_t", "short",
                             "unsigned short", "char", "signed char", "unsigned char"})
_INTEGER_TYPES = WIDE_INTEGERS | NARROW_INTEGERS | {"long long int", "unsigned long int"}
LOW_PRECISION = frozenset({"half", "__half", "__nv_bfloat16", "nv_bfloat16"})
# their two-lane vectors (`__hadd2`, `__hfma2`): as accumulators they round like their lanes
LOW_PRECISION_PAIRS = frozenset({"half2", "__half2", "__nv_bfloat162", "nv_bfloat162"})


@dataclass
class FileFacts:
    """What the file says about sizes: integer constants (#define, constexpr/const globals),
    struct layouts, and block sizes at launch sites; and its bytes, to read node texts from."""
    source: bytes = field(repr=False, compare=False)     # the file's bytes, from offset 0
    constants: dict[str, int] = field(default_factory=dict)
    structs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)   # name → (field, type)
    # every struct's scalar and pointer members, layout or not: name → (field, type, is pointer);
    # a kernel's parameter struct passed by value (`Params p`) reads its members as parameters
    members: dict[str, list[tuple[str, str, bool]]] = field(default_factory=dict)
    block_sizes: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # kernel → block
    # object-like macros whose whole value is an unsuffixed floating literal (`#define C 0.5`):
    # name → that literal; a use of one is a double literal to the precision analysis
    double_macros: dict[str, str] = field(default_factory=dict)
    # function-like macros of pure arithmetic (`#define PAD(i) ((i) >> 5)`): name → (parameters,
    # body); the SIMT interpreter evaluates a use as the body with the parameters bound
    arith_macros: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    # names whose value depends on the place (defined twice, #undef'd): (byte, value or None)
    scoped: dict[str, list[tuple[int, int | None]]] = field(default_factory=dict)
    # in a view (`at`): the scoped names whose value there differs from `constants`' last one
    scope: tuple[tuple[str, int], ...] = ()
    # the largest element count a comment states (`// 64 images of 8192 x 8192`, `2048^3 grid`,
    # `~3.1e9 elements`) and its 0-based line: what the author says the data can reach
    stated_elements: tuple[int, int] | None = None

    def at(self, byte: int, code: bytes | None = None) -> FileFacts:
        """These facts as code at `byte` sees them: each scoped name with its definition in
        force there (the last one of the file where none is: not yet defined, or #undef'd);
        with `code`, only the names that code mentions. Block sizes stay shared."""
        if not self.scoped:
            return self
        changes: dict[str, int] = {}
        for name, events in self.scoped.items():
            if code is not None and name.encode() not in code:
                continue
            value = self.constants.get(name)
            for where, v in events:
                if where >= byte:
                    break
                value = v if v is not None else self.constants.get(name)
            if value != self.constants.get(name):
                changes[name] = value
        if not changes:
            return self
        return replace(self, constants={**self.constants, **changes},
                       scope=tuple(sorted(changes.items())))

    def text(self, node: Node) -> str:
        """`text(node)` for a node of this file, sliced from its bytes: `Node.text` costs several
        times as much (a memoryview and two copies per call)."""
        raw = self.source[node.start_byte:node.end_byte]
        try:
            return raw.decode()         # without arguments: spelling out the codec costs more
        except UnicodeDecodeError:
            return raw.decode("utf-8", "replace")

    def sizeof(self, type_name: str) -> int | None:
        return self._layout(type_name)[0]

    def alignof(self, type_name: str) -> int | None:
        return self._layout(type_name)[1]

    def _layout(self, type_name: str) -> tuple[int | None, int | None]:
        if type_name in PRIMITIVE_SIZES:
            size = PRIMITIVE_SIZES[type_name]
            return size, PRIMITIVE_ALIGN.get(type_name, size)
        fields = self.structs.get(type_name)
        if not fields:
            return None, None
        size = align = 0
        for _, ft in fields:
            s, a = self._layout(ft)
            if s is None or a is None:
                return None, None
            size = (size + a - 1) // a * a + s
            align = max(align, a)
        return (size + align - 1) // align * align, align

    def field_offset(self, type_name: str, field_name: str) -> tuple[int, int] | None:
        """(byte offset, byte size) of a struct field."""
        offset = 0
        for fname, ft in self.structs.get(type_name, ()):
            s, a = self._layout(ft)
            if s is None or a is None:
                return None
            offset = (offset + a - 1) // a * a
            if fname == field_name:
                return offset, s
            offset += s
        return None


def file_facts(root: Node, fns: list[Function] = ()) -> FileFacts:
    """Constants and structs of the file, and the block sizes launched from `fns`. Only the
    compiled branch of an `#if` on constants is read; a name defined again or #undef'd gets a
    value per place (`FileFacts.at`)."""
    # the root's text starts at its first token: zeros stand for the leading blanks, never read
    facts = FileFacts(bytes(root.start_byte) + (root.text or b""))
    events: dict[str, list[tuple[int, int | None]]] = {}
    defined: set[str] = set()                 # macros, with an integer value or not
    macros: dict[str, int] = {}               # what `#if` sees: macros only, not C++ constants

    def define(name: str, value: int | None, byte: int) -> None:
        events.setdefault(name, []).append((byte, value))
        if value is None:
            facts.constants.pop(name, None)
        else:
            facts.constants[name] = value

    stack = list(reversed(root.children))
    while stack:
        node = stack.pop()
        t = node.type
        if t == "preproc_def":
            name, value = text(node.child_by_field_id(FIELD.name)), node.child_by_field_id(FIELD.value)
            defined.add(name)
            v = const_eval(text(value), facts.constants) if value is not None else None
            define(name, v, node.start_byte)
            if v is not None:
                macros[name] = v
            literal = _double_literal_value(text(value)) if value is not None and v is None else None
            if literal is not None:
                facts.double_macros[name] = literal
            else:
                facts.double_macros.pop(name, None)
        elif t == "preproc_function_def":
            _record_arith_macro(node, facts)
        elif t == "preproc_call" and text(node.child_by_field_id(FIELD.directive)) == "#undef":
            name = text(node.child_by_field_id(FIELD.argument)).strip()
            facts.arith_macros.pop(name, None)
            defined.discard(name)
            macros.pop(name, None)
            facts.double_macros.pop(name, None)
            define(name, None, node.start_byte)
        elif t == "declaration":
            _record_const_decl(node, facts, define)
        elif t == "enum_specifier" or (t == "type_definition" and node.named_children
                                       and node.named_children[0].type == "enum_specifier"):
            _record_enum(node if t == "enum_specifier" else node.named_children[0], facts, define)
        elif t == "struct_specifier" or (t == "type_definition" and node.named_children
                                         and node.named_children[0].type == "struct_specifier"):
            _record_struct(node, facts)
        elif t in CONDITIONALS:
            stack.extend(reversed(compiled_children(node, macros, defined)))
        elif t in ("template_declaration", "namespace_definition", "declaration_list",
                   "linkage_specification", "preproc_else"):
            stack.extend(reversed(node.named_children))
    # only a name defined with different values needs a value per place; between an #undef and
    # its next definition the name means something else (a constant of a namespace): the last one
    facts.scoped = {}
    for name, evs in events.items():
        values = {v for _, v in evs if v is not None}
        if len(values) > 1:
            facts.scoped[name] = evs
        elif values and name not in facts.constants:     # `#undef` at the end of a header
            facts.constants[name] = values.pop()
    for fn in fns:
        constants = facts.at(fn.node.start_byte, fn.code).constants
        for kernel, size in launch_blocks(captures(fn.body), constants).items():
            facts.block_sizes.setdefault(kernel, size)
    facts.stated_elements = stated_elements(facts.source)
    return facts


_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)
_NUMBER_TEXT = r"\d+(?:[,_']\d{3})*"
_PRODUCT = re.compile(rf"(?:({_NUMBER_TEXT})\s+[a-z]+\s+of\s+)?"
                      rf"({_NUMBER_TEXT}(?:\s*(?:x|×|\*)\s*{_NUMBER_TEXT})+)"
                      rf"|({_NUMBER_TEXT})\s*(?:\^|\*\*)\s*([2-4])(?!\d)|({_NUMBER_TEXT})([²³])"
                      rf"|(\d+(?:\.\d+)?)\s*e\s*(\d{{1,2}})\s*(?:elements|entries|values|floats|items)"
                      rf"|({_NUMBER_TEXT})\s*(?:elements|entries|values|floats|items)", re.IGNORECASE)


# what any size phrase contains: one C-speed pass over the file finds whether to look closer
_CANDIDATE = re.compile(rb"\d\s*(?:[x*^]|\xc3\x97|\xc2[\xb2\xb3]|e\s*\d|elements|entries|values|floats"
                        rb"|items)", re.IGNORECASE)


def stated_elements(source: bytes) -> tuple[int, int] | None:
    """The largest element count the file's comments state, with its line (see `FileFacts`)."""
    if not _CANDIDATE.search(source):
        return None
    best: tuple[int, int] | None = None
    for comment in _COMMENT.finditer(source):
        if not _CANDIDATE.search(comment.group()):
            continue
        body = comment.group().decode("utf-8", "replace")
        for m in _PRODUCT.finditer(body):
            count = _phrase_count(m)
            if count is not None and (best is None or count > best[0]):
                line = source.count(b"\n", 0, comment.start()) + body.count("\n", 0, m.start())
                best = (count, line)
    return best


def _phrase_count(m: re.Match) -> int | None:
    def number(s: str) -> int:
        return int(re.sub(r"[,_']", "", s))
    many, product, base, power, base2, superscript, mantissa, exponent, plain = m.groups()
    if product:
        count = math.prod(number(f) for f in re.split(r"\s*(?:x|×|\*)\s*", product, flags=re.IGNORECASE))
        return count * (number(many) if many else 1)
    if base:
        return number(base) ** int(power)
    if base2:
        return number(base2) ** (2 if superscript == "²" else 3)
    if mantissa:
        return int(float(mantissa) * 10 ** int(exponent))
    return number(plain) if plain else None


# a body of names, numbers, operators and parentheses: no call, subscript, assignment or statement
_ARITH_BODY = re.compile(r"[\w\s()+\-*/%<>=&|^~!?:.]+")
_CALL_IN_BODY = re.compile(r"\w\s*\(|(?<![=!<>])=(?!=)")


def _record_arith_macro(node: Node, facts: FileFacts) -> None:
    name = text(node.child_by_field_id(FIELD.name))
    params = node.child_by_field_id(FIELD.parameters)
    value = node.child_by_field_id(FIELD.value)
    facts.arith_macros.pop(name, None)
    if params is None or value is None or "..." in text(params):     # variadic: not expanded
        return
    body = text(value).strip()
    names = tuple(text(p) for p in params.named_children if p.type == "identifier")
    if body and _ARITH_BODY.fullmatch(body) and not _CALL_IN_BODY.search(body) \
            and "++" not in body and "--" not in body:
        facts.arith_macros[name] = (names, body)


def macro_expression(body: str) -> tuple[bytes, Node] | None:
    """An arithmetic macro's body parsed once per spelling: the bytes its node's offsets index
    (what `FileFacts.source` must be while it is read) and its expression node."""
    return _macro_tree(body)[1]


@lru_cache(maxsize=256)
def _macro_tree(body: str) -> tuple[Tree, tuple[bytes, Node] | None]:
    # the tree is cached with its node: a node is only valid while its tree lives
    data = b"int __dice_macro = (" + body.encode() + b");"
    tree = new_parser().parse(data)
    decl = tree.root_node.named_children[0] if tree.root_node.named_children else None
    init = decl.child_by_field_id(FIELD.declarator) if decl is not None else None
    value = init.child_by_field_id(FIELD.value) if init is not None else None
    return tree, None if value is None or tree.root_node.has_error else (data, value)


def _double_literal_value(value: str) -> str | None:
    """The literal of a macro value that is one double literal, parenthesized or signed or not
    (`0.5`, `(-1e-6)`), else None."""
    v = value.strip()
    while v.startswith("(") and v.endswith(")"):
        v = v[1:-1].strip()
    digits = v.lstrip("+-").strip()
    if not digits or not (digits[0].isdigit() or digits[0] == "."):
        return None
    if any(not (ch.isalnum() or ch in ".'+-") for ch in digits):
        return None
    return v if float_literal_type(digits) == "double" else None


def _record_const_decl(node: Node, facts: FileFacts, define) -> None:
    quals = {text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
    if not quals & {"const", "constexpr"}:
        spec = node.child_by_field_id(FIELD.type)
        if spec is not None and spec.type == "struct_specifier":
            _record_struct(spec, facts)
        return
    for d in node.children_by_field_id(FIELD.declarator):
        if d.type == "init_declarator":
            v = const_eval(text(d.child_by_field_id(FIELD.value)), facts.constants)
            if v is not None:
                define(text(d.child_by_field_id(FIELD.declarator)), v, node.start_byte)


def _record_enum(node: Node, facts: FileFacts, define) -> None:
    """Enumerators as constants (`enum { NX = 1024, NY };`): each is its value or one more
    than the one before."""
    body = next((c for c in node.named_children if c.type == "enumerator_list"), None)
    following: int | None = 0
    for e in body.named_children if body is not None else ():
        if e.type != "enumerator":
            continue
        value = e.child_by_field_id(FIELD.value)
        v = const_eval(text(value), facts.constants) if value is not None else following
        if v is not None:
            define(text(e.child_by_field_id(FIELD.name)), v, e.start_byte)
        following = None if v is None else v + 1


def _record_struct(node: Node, facts: FileFacts) -> None:
    spec = node if node.type == "struct_specifier" else (
        node.child_by_field_id(FIELD.type) or node.named_children[0])
    body = spec.child_by_field_id(FIELD.body)
    if body is None:
        return
    name = text(spec.child_by_field_id(FIELD.name))
    if node.type == "type_definition":
        decl = node.child_by_field_id(FIELD.declarator)
        name = name or text(decl)
    if not name:
        return
    fields: list[tuple[str, str]] = []
    members: list[tuple[str, str, bool]] = []
    layout = True
    for fd in body.named_children:
        if fd.type != "field_declaration":
            continue
        ft = base_type(fd)
        for d in fd.children_by_field_id(FIELD.declarator):
            pointee = d.child_by_field_id(FIELD.declarator) if d.type == "pointer_declarator" else None
            if pointee is not None and pointee.type == "field_identifier":
                members.append((text(pointee), ft, True))
            elif d.type == "field_identifier":
                members.append((text(d), ft, False))
            layout = layout and d.type == "field_identifier"   # arrays, pointers, bitfields: unknown
            fields.append((text(d), ft))
    facts.members[name] = members
    if layout:
        facts.structs[name] = fields


@dataclass(frozen=True)
class LaunchSite:
    """What one `kernel<<<grid, block>>>(args)` fixes: block and grid sizes and the arguments
    that are integer constants (by position), each None where not constant."""
    kernel: str
    block: tuple[int, int, int] | None
    grid: tuple[int, int, int] | None
    args: tuple[int | None, ...]
    template_args: tuple[int | None, ...] = ()      # `k<32, 8><<<…>>>`
    rounded_up: bool = False    # the grid is a ceiling division (`(n + b - 1) / b`): threads past n run
    # Dynamic shared memory above what a kernel gets without opting in, and the launch's bytes
    # (start, end) relative to its function until the analyzer places them in the file; None for
    # the other launches, so that edits around an ordinary launch change no kernel's facts.
    oversized: tuple[int, int, int] | None = None    # (dynamic bytes, start, end)
    # A block no GPU launches (BLOCK_LIMITS) and the launch's bytes, placed the same way.
    illegal_block: tuple[tuple[int, int, int], int, int] | None = None     # (block, start, end)

    def placed(self, base: int) -> LaunchSite:
        """This site with its oversized or illegal launch's bytes counted from the file's start."""
        out = self
        if self.oversized is not None:
            size, start, end = self.oversized
            out = replace(out, oversized=(size, start + base, end + base))
        if self.illegal_block is not None:
            block, start, end = self.illegal_block
            out = replace(out, illegal_block=(block, start + base, end + base))
        return out


# Threads per block along x, y, z and in all, on every arch since sm_20
BLOCK_LIMITS = (1024, 1024, 64, 1024)


def block_over_limits(block: tuple[int, int, int]) -> bool:
    return any(d > limit for d, limit in zip(block, BLOCK_LIMITS)) or \
        block[0] * block[1] * block[2] > BLOCK_LIMITS[3]


# Dynamic shared memory a launch may ask for unless the kernel raised its limit with
# cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) (every arch since sm_70)
DEFAULT_DYNAMIC_SMEM = 48 * 1024
# the call's arguments up to the end of its statement (`ok = cudaFuncSetAttribute(...) == cudaSuccess;`)
_RAISES_LIMIT = re.compile(rb"cudaFuncSetAttribute\s*\((?P<args>[^;]*?MaxDynamicSharedMemorySize[^;]*);")


def raised_smem_limits(data: bytes) -> frozenset[str] | None:
    """The kernels whose dynamic shared-memory limit some call of the file raises, or None when a
    call raises it through a pointer or a wrapper (for any kernel, as far as the file shows)."""
    raised: set[str] = set()
    if b"MaxDynamicSharedMemorySize" not in data:
        return frozenset()
    for m in _RAISES_LIMIT.finditer(data):
        target = m.group("args").split(b",")[0]
        named = re.findall(rb"[A-Za-z_]\w*", target.split(b"<")[0])
        if not named or not re.search(rb"__global__[^;{]*?\b" + re.escape(named[-1]) + rb"\s*\(", data):
            return None
        raised.add(named[-1].decode())
    return frozenset(raised)


def launch_blocks(found: dict[str, list[Node]], constants: dict[str, int]) -> dict[str, tuple[int, int, int]]:
    """Literal block sizes of the kernel launches in one function body (`found`: its captures)."""
    out: dict[str, tuple[int, int, int]] = {}
    for site in launch_sites(found, constants, 0):
        if site.block is not None:
            out.setdefault(site.kernel, site.block)
    return out


def launch_sites(found: dict[str, list[Node]], constants: dict[str, int], base: int) -> list[LaunchSite]:
    """The kernel launches of one function body (`found`: its captures; `base`: the function's
    first byte), read with the file's constants and the function's own integer variables whose
    value is a constant (`const int rows = 120000;`, never reassigned)."""
    launches = [n for n in found.get("call", ()) if b"<<<" in (n.text or b"")]
    if not launches:                # most functions launch nothing: skip reading their declarations
        return []
    local = _local_constants(found, constants)
    dims: dict[str, tuple[int, int, int]] = {}
    written = {name: text(value) for name, value in initialized_locals(found)}   # read grids through them
    events = [(n.start_byte, "call", n) for n in launches]
    events += [(n.start_byte, "decl", n) for n in found.get("decl", ())
               if text(n.child_by_field_id(FIELD.type)) == "dim3"]
    out: list[LaunchSite] = []
    for _, kind, node in sorted(events, key=lambda e: e[0]):      # a dim3 precedes its launch
        if kind == "decl":
            for d in node.children_by_field_id(FIELD.declarator):
                name, args = _dim3_parts(d)
                vals = [const_eval(a, local) for a in args]
                if name and vals and all(v is not None for v in vals):
                    vals = (vals + [1, 1])[:3]
                    dims[name] = (vals[0], vals[1], vals[2])   # type: ignore[assignment]
            continue
        cfg = next((c for c in node.named_children if c.type == "kernel_call_syntax"), None)
        if cfg is None or len(cfg.named_children) < 2:
            continue
        callee = node.child_by_field_id(FIELD.function)
        kernel = text(callee).split("<")[0].split("::")[-1].strip()
        arguments = node.child_by_field_id(FIELD.arguments)
        args = tuple(const_eval(text(a), local) for a in (arguments.named_children if arguments else ()))
        listed = callee.child_by_field_id(FIELD.arguments) if callee.type == "template_function" else None
        template_args = tuple(const_eval(text(a), local) for a in (listed.named_children if listed else ()))
        grid = cfg.named_children[0]
        grid_text = written.get(text(grid), text(grid))
        shared = const_eval(text(cfg.named_children[2]), local) if len(cfg.named_children) > 2 else None
        oversized = (shared, node.start_byte - base, node.end_byte - base) \
            if shared is not None and shared > DEFAULT_DYNAMIC_SMEM else None
        block = _dims(cfg.named_children[1], dims, local)
        illegal = (block, node.start_byte - base, node.end_byte - base) \
            if block is not None and block_over_limits(block) else None
        out.append(LaunchSite(kernel, block, _dims(grid, dims, local), args, template_args,
                              _ceiling_division(grid_text), oversized, illegal))
    return out


_CEIL_NAMES = re.compile(r"\b(?:ceil\w*|\w*div_?up|cdiv|round_?up)\s*\(", re.IGNORECASE)
_PLUS_MINUS_ONE = re.compile(r"\+[^;]*?-\s*1\s*\)\s*/")           # (n + b - 1) / b
_PLUS_LITERAL = re.compile(r"\+\s*(\d+)\s*\)\s*/\s*(\d+)")          # (n + 255) / 256


def _ceiling_division(expression: str) -> bool:
    """Whether a grid expression rounds a count up to whole blocks."""
    if _CEIL_NAMES.search(expression) or _PLUS_MINUS_ONE.search(expression):
        return True
    return any(int(a) + 1 == int(b) for a, b in _PLUS_LITERAL.findall(expression))


def initialized_locals(found: dict[str, list[Node]]) -> list[tuple[str, Node]]:
    """(name, initializer) of each local declared with one (`int i = …`, `float* p = …`,
    `dim3 grid((w + 31) / 32, h)`: its argument list), in document order."""
    out: list[tuple[str, Node]] = []
    for decl in found.get("decl", ()):
        for d in decl.children_by_field_id(FIELD.declarator):
            value = d.child_by_field_id(FIELD.value) if d.type == "init_declarator" else None
            if value is not None:
                name, _ = declarator_name(d.child_by_field_id(FIELD.declarator))
                if name:
                    out.append((name, value))
    return out


def constant_calls(found: dict[str, list[Node]], constants: dict[str, int]
                   ) -> tuple[tuple[str, tuple[int | None, ...]], ...]:
    """(callee, argument values) of the plain calls in one host function body that pass some
    integer constant (`launch_add(m, b, 120000, 40000)`): what a host wrapper's parameters
    take, for the launches inside it."""
    local = None
    out = []
    for call in found.get("call", ()):
        arguments = call.child_by_field_id(FIELD.arguments)
        if arguments is None or not arguments.named_children or \
                any(c.type == "kernel_call_syntax" for c in call.named_children):
            continue
        if local is None:
            local = _local_constants(found, constants)
        values = tuple(const_eval(text(a), local) for a in arguments.named_children)
        if any(v is not None for v in values):
            out.append((text(call.child_by_field_id(FIELD.function)).split("::")[-1], values))
    return tuple(out)


def forwarded_constants(fn: Function, calls: list[tuple[str, tuple[int | None, ...]]]) -> dict[str, int]:
    """The largest constant each integer parameter of host function `fn` receives at `calls`."""
    out: dict[str, int] = {}
    mine = [values for callee, values in calls if callee == fn.name]
    for position, (name, type_name, indirect) in enumerate(fn.params):
        if indirect or type_name not in _INTEGER_TYPES:
            continue
        known = [v[position] for v in mine if position < len(v) and v[position] is not None]
        if known:
            out[name] = max(known)      # type: ignore[type-var]
    return out


def _dims(node: Node, named: dict[str, tuple[int, int, int]], constants: dict[str, int]
          ) -> tuple[int, int, int] | None:
    """A launch configuration's grid or block: a dim3 variable, `dim3(a, b)` or a number."""
    size = named.get(text(node))
    if size is not None:
        return size
    v = const_eval(text(node), constants)
    if v is not None:
        return (v, 1, 1)
    if node.type == "call_expression" and text(node).startswith("dim3"):
        vals = [const_eval(text(a), constants)
                for a in node.child_by_field_id(FIELD.arguments).named_children]
        if vals and all(v is not None for v in vals):
            return tuple((vals + [1, 1])[:3])   # type: ignore[return-value]
    return None


def _local_constants(found: dict[str, list[Node]], constants: dict[str, int]) -> dict[str, int]:
    """The file's constants plus the function's integer variables initialized to a constant and
    never assigned again."""
    assigned = {text(n.child_by_field_id(FIELD.left)) for n in found.get("assign", ())}
    assigned |= {text(n.child_by_field_id(FIELD.argument)) for n in found.get("update", ())}
    out = dict(constants)
    for node in found.get("decl", ()):
        if base_type(node) not in _INTEGER_TYPES:
            continue
        for d in node.children_by_field_id(FIELD.declarator):
            if d.type == "init_declarator":
                name = text(d.child_by_field_id(FIELD.declarator))
                v = const_eval(text(d.child_by_field_id(FIELD.value)), out)
                if v is not None and name not in assigned:
                    out[name] = v
    return out


def _dim3_parts(d: Node) -> tuple[str, list[str]]:
    if d.type == "function_declarator":      # `dim3 block(TILE, ROWS);` parses as a declaration
        params = d.child_by_field_id(FIELD.parameters)
        return text(d.child_by_field_id(FIELD.declarator)), [
            text(p) for p in (params.named_children if params is not None else ())]
    if d.type == "init_declarator":
        name = text(d.child_by_field_id(FIELD.declarator))
        value = d.child_by_field_id(FIELD.value)
        if value is not None and value.type in ("argument_list", "initializer_list"):
            return name, [text(a) for a in value.named_children]
        if value is not None and value.type == "call_expression":
            args = value.child_by_field_id(FIELD.arguments)
            return name, [text(a) for a in args.named_children] if args is not None else []
    return "", []


_QUALIFIER_RE = re.compile(r"\b\w+\s*::\s*")
_TOKEN_RE = re.compile(r"\s*(0[xX][0-9a-fA-F]+|\d+|[A-Za-z_]\w*|<<|>>|[-+*/%()&|^~])")


@lru_cache(maxsize=4096)
def _tokens(expr: str) -> tuple[str, ...] | None:
    expr = re.sub(r"(?<=\d)[uUlL]+\b", "", expr.strip())
    if "::" in expr:     # `kn::kTile` is `kTile`: constants are recorded by plain name, namespaces aside
        expr = _QUALIFIER_RE.sub("", expr)
    out, pos = [], 0
    while pos < len(expr):
        m = _TOKEN_RE.match(expr, pos)
        if not m:
            return None
        out.append(m.group(1))
        pos = m.end()
        while pos < len(expr) and expr[pos].isspace():
            pos += 1
    return tuple(out)


# sizeof() of the scalar and vector types a size expression names (`kCols * sizeof(float)`)
BUILTIN_SIZES: dict[str, int] = {
    **{t: 1 for t in ("char", "signed char", "unsigned char", "int8_t", "uint8_t", "bool")},
    **{t: 2 for t in ("short", "unsigned short", "int16_t", "uint16_t", "half", "__half", "__nv_bfloat16",
                      "nv_bfloat16")},
    **{t: 4 for t in ("int", "unsigned", "unsigned int", "int32_t", "uint32_t", "float", "half2", "__half2",
                      "__nv_bfloat162")},
    **{t: 8 for t in ("long", "long long", "unsigned long", "unsigned long long", "int64_t", "uint64_t",
                      "size_t", "double", "float2", "int2")},
    **{t: 16 for t in ("float4", "int4", "uint4", "double2")},
}


_CAST_WORDS = frozenset({"size_t", "int", "unsigned", "signed", "long", "short", "int64_t", "uint64_t",
                         "int32_t", "uint32_t", "ptrdiff_t"})


def const_eval(expr: str, constants: dict[str, int]) -> int | None:
    """An integer constant expression of literals, known names and + - * / % << >> & | ^ ~,
    or None. Casts such as (size_t) are skipped."""
    toks = _tokens(expr)
    if not toks:
        return None
    if len(toks) == 1:           # a literal or a name (most calls): skip the precedence climb
        tok = toks[0]
        return int_literal(tok) if tok[0].isdigit() else constants.get(tok)
    pos = 0

    def primary() -> int | None:
        nonlocal pos
        if pos >= len(toks):
            return None
        tok = toks[pos]
        pos += 1
        if tok == "(":
            end = pos
            while end < len(toks) and toks[end] in _CAST_WORDS:
                end += 1
            if end > pos and end < len(toks) and toks[end] == ")":   # (long long), (unsigned int), ...
                pos = end + 1
                return unary()
            v = binary(0)
            if pos < len(toks) and toks[pos] == ")":
                pos += 1
                return v
            return None
        if tok == "-":
            v = unary()
            return None if v is None else -v
        if tok == "~":
            v = unary()
            return None if v is None else ~v
        if tok[0].isdigit():
            return int_literal(tok)
        if tok == "sizeof" and pos < len(toks) and toks[pos] == "(":
            close = toks.index(")", pos) if ")" in toks[pos:] else -1
            if close < 0:
                return None
            type_name = " ".join(toks[pos + 1:close])
            pos = close + 1
            return BUILTIN_SIZES.get(type_name)
        return constants.get(tok)

    def unary() -> int | None:
        return primary()

    levels = [("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*", "/", "%")]

    def binary(level: int) -> int | None:
        nonlocal pos
        if level == len(levels):
            return unary()
        left = binary(level + 1)
        while left is not None and pos < len(toks) and toks[pos] in levels[level]:
            op = toks[pos]
            pos += 1
            right = binary(level + 1)
            if right is None:
                return None
            left = _apply(op, left, right)
        return left

    v = binary(0)
    return v if pos == len(toks) else None


def walk(node: Node) -> Iterator[Node]:
    """`node` and every named node under it (in no particular order)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.named_children)


def loop_bound(loop: Node) -> tuple[str, str, str] | None:
    """(variable, `<` or `<=`, bound text) of the condition of `for (...; v < n; ...)`; None for
    any other condition."""
    cond = loop.child_by_field_id(FIELD.condition)
    if cond is None or cond.type != "binary_expression" or operator(cond) not in ("<", "<="):
        return None
    left, right = cond.child_by_field_id(FIELD.left), cond.child_by_field_id(FIELD.right)
    if left is None or right is None or left.type != "identifier":
        return None
    return text(left), operator(cond), text(right)


def loop_start(loop: Node, var: str) -> str | None:
    """The text of the value `for (int v = a; ...)` (or `v = a`) starts `var` at; None otherwise."""
    init = loop.child_by_field_id(FIELD.initializer)
    if init is None:
        return None
    first = re.fullmatch(rf"(?:[\w\s]+\s)?{re.escape(var)}\s*=\s*(.+?);?", text(init).strip())
    return first.group(1) if first else None


def counts_down(loop: Node) -> str | None:
    """The variable of `for (v = a; v > b; --v)` (or `v >= b`, `v--`, `v -= k`); None for any other
    loop."""
    cond, update = loop.child_by_field_id(FIELD.condition), loop.child_by_field_id(FIELD.update)
    if cond is None or update is None or cond.type != "binary_expression":
        return None
    if operator(cond) not in (">", ">="):
        return None
    left = cond.child_by_field_id(FIELD.left)
    if left is None or left.type != "identifier":
        return None
    var = text(left)
    step = text(update).replace(" ", "")
    return var if step in (f"--{var}", f"{var}--") or step.startswith(f"{var}-=") else None


def loop_step(loop: Node, var: str, constants: dict[str, int]) -> int | None:
    """The constant step of a loop's update `++v`, `v++` or `v += s`; None for any other."""
    update = loop.child_by_field_id(FIELD.update)
    if update is None:
        return None
    step_text = text(update).replace(" ", "")
    if step_text in (f"++{var}", f"{var}++"):
        return 1
    m = re.fullmatch(rf"{re.escape(var)}\+=(.+)", step_text)
    return const_eval(m.group(1), constants) if m else None


def trip_count(loop: Node, constants: dict[str, int], *, unit_step: bool = True,
               start_if_unknown: int | None = None) -> int | None:
    """The iterations of `for (v = a; v < b; v += s)` (or `v <= b`, `++v`, `v++`) with constant
    a, b and s; None for any other loop. `unit_step`: only s = 1 counts; `start_if_unknown`:
    the start assumed where a is not constant (as `threadIdx.x`)."""
    header = loop_bound(loop)
    if header is None:
        return None
    var, op, bound_text = header
    step = loop_step(loop, var, constants)
    if step is None or step <= 0 or (unit_step and step != 1):
        return None
    first = loop_start(loop, var)
    start = const_eval(first, constants) if first is not None else None
    start = start_if_unknown if start is None else start
    bound = const_eval(bound_text, constants)
    if start is None or bound is None:
        return None
    return max(0, -(-(bound - start + (op == "<=")) // step))


def _apply(op: str, a: int, b: int) -> int | None:
    if op in ("/", "%") and b == 0:
        return None
    if op in ("<<", ">>") and not 0 <= b < 64:
        return None
    return {"+": a + b, "-": a - b, "*": a * b, "/": int(a / b) if b else 0, "%": a % b if b else 0,
            "<<": a << b, ">>": a >> b, "&": a & b, "|": a | b, "^": a ^ b}[op]


def parse(parser: Parser, data: bytes, old: Tree | None = None) -> Tree:
    return parser.parse(data, old) if old is not None else parser.parse(data)


@dataclass(frozen=True)
class LaunchFacts:
    """What the file's launch sites fix for one kernel, over all of them: the largest grid
    extent per axis (None when some site's grid is not constant) and the largest constant
    value passed to each integer parameter."""
    grid: tuple[int, int, int] | None = None
    values: tuple[tuple[str, int], ...] = ()
    rounded_up: bool = False    # some launch rounds its grid up (`LaunchSite.rounded_up`)
    oversized: tuple[tuple[int, int, int], ...] = ()   # launches over DEFAULT_DYNAMIC_SMEM, placed
    illegal_blocks: tuple[tuple[tuple[int, int, int], int, int], ...] = ()   # over BLOCK_LIMITS, placed


NO_LAUNCH = LaunchFacts()


def template_values(fn: Function, sites: list[LaunchSite], constants: dict[str, int]) -> dict[str, int]:
    """The value of each integer template parameter of `fn`: the largest its launches give, else
    its default."""
    out: dict[str, int] = {}
    for position, (name, default) in enumerate(fn.template_params):
        known = [s.template_args[position] for s in sites
                 if position < len(s.template_args) and s.template_args[position] is not None]
        value = max(known) if known else const_eval(default, constants) if default else None
        if name and value is not None:
            out[name] = value
    return out


def launch_facts(fn: Function, sites: list[LaunchSite]) -> LaunchFacts:
    mine = [s for s in sites if s.kernel == fn.name]
    if not mine:
        return NO_LAUNCH
    grids = [s.grid for s in mine]
    grid = None if any(g is None for g in grids) else \
        tuple(max(g[axis] for g in grids) for axis in range(3))     # type: ignore[index]
    values: dict[str, int] = {}
    for position, (name, type_name, indirect) in enumerate(fn.params):
        if indirect or type_name not in _INTEGER_TYPES:
            continue
        known = [s.args[position] for s in mine if position < len(s.args) and s.args[position] is not None]
        if known:
            values[name] = max(known)
    return LaunchFacts(grid, tuple(sorted(values.items())),   # type: ignore[arg-type]
                       any(s.rounded_up for s in mine),
                       tuple(sorted(s.oversized for s in mine if s.oversized is not None)),
                       tuple(sorted(s.illegal_block for s in mine if s.illegal_block is not None)))
