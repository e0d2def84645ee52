"""The tensor form's syntax tree and its recursive-descent parser (Python/PyTorch precedence).

Every node keeps its character range so that later errors (unknown name, shape mismatch) can
point at exactly the text responsible.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

from .errors import IntentError
from .lexer import Token, statement_spans, tokenize
from .options import OPTION_KEYS


@dataclass
class Expr:
    start: int
    end: int


@dataclass
class Name(Expr):
    id: str


@dataclass
class Literal(Expr):
    value: Union[int, float, bool, str, None]


@dataclass
class Seq(Expr):
    items: list[Expr]


@dataclass
class Unary(Expr):
    op: str           # "-" "+" "~"
    operand: Expr


@dataclass
class Binary(Expr):
    op: str           # "+" "-" "*" "/" "@" "**" "&" "|" and comparisons
    left: Expr
    right: Expr


@dataclass
class Attribute(Expr):
    value: Expr
    attr: str
    attr_start: int


@dataclass
class Keyword:
    name: str
    value: Expr
    start: int        # range of `name=value`
    end: int


@dataclass
class Call(Expr):
    func: Expr
    args: list[Expr]
    keywords: list[Keyword] = field(default_factory=list)


@dataclass
class Span:
    text: str
    start: int
    end: int


@dataclass
class Declaration:
    names: list[Span]
    dtype: Span
    dims: list[Span] | None     # None: a scalar written without brackets
    start: int
    end: int


@dataclass
class Assignment:
    target: Span
    value: Expr
    start: int
    end: int


@dataclass
class OptionSetting:
    key: Span
    value: Span


@dataclass
class WordNote:
    """A statement in words inside a tensor-form intent (a target, a goal, strategy hints)."""
    start: int
    end: int


Statement = Union[Declaration, Assignment, OptionSetting, WordNote]

COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
# How deep an expression may nest (parentheses, calls, unary signs, chained operators). The
# parser and every later stage recurse over the tree; a bound keeps hostile input (hundreds of
# nested parentheses, a sum of thousands of terms) a clear error instead of a RecursionError.
MAX_NESTING = 64


def looks_like_statement(tokens: list[Token]) -> bool:
    """Whether a token run opens a declaration (`x:` / `a, b:`) or a tensor assignment (`y = `)."""
    if len(tokens) < 2 or tokens[0].kind != "name":
        return False
    if tokens[1].text == ":":
        return True
    if tokens[1].text == "=":
        return tokens[0].text not in OPTION_KEYS
    i = 1
    while i + 1 < len(tokens) and tokens[i].text == "," and tokens[i + 1].kind == "name":
        i += 2
    return i > 1 and i < len(tokens) and tokens[i].text == ":"


_TENSOR_START = re.compile(r"\s*[A-Za-z_]\w*\s*(?:=(?!=)|:|,\s*[A-Za-z_]\w*\s*[:,])")


def parse_statements(text: str) -> list[Statement]:
    """The statements of a tensor-form intent. A statement that does not start like a
    declaration, assignment or option is kept as a `WordNote` (words such as "on an A100")."""
    out: list[Statement] = []
    for start, end in statement_spans(text):
        if not _TENSOR_START.match(text, start, end):
            out.append(WordNote(start, end))
            continue
        out.append(_Parser(text, tokenize(text, start, end)).statement())
    return out


def _children(expr: Expr) -> list[Expr]:
    if isinstance(expr, Binary):
        return [expr.left, expr.right]
    if isinstance(expr, Unary):
        return [expr.operand]
    if isinstance(expr, Attribute):
        return [expr.value]
    if isinstance(expr, Seq):
        return list(expr.items)
    if isinstance(expr, Call):
        return [expr.func, *expr.args, *(k.value for k in expr.keywords)]
    return []


def tree_depth(expr: Expr) -> int:
    """The depth of an expression tree, counted without recursion (it may be very deep)."""
    deepest, stack = 0, [(expr, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in _children(node))
    return deepest


class _Parser:
    def __init__(self, text: str, tokens: list[Token]):
        self.text = text
        self.tokens = tokens
        end = tokens[-1].end if tokens else 0
        self.eof = Token("end", "", end, end)
        self.i = 0
        self.nesting = 0   # expressions and unary operands open on the parser's stack

    # -- token helpers ---------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token:
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else self.eof

    def next(self) -> Token:
        tok = self.peek()
        self.i += 1
        return tok

    def accept(self, text: str) -> Token | None:
        if self.peek().text == text and self.peek().kind in ("op",):
            return self.next()
        return None

    def expect(self, text: str, what: str) -> Token:
        tok = self.peek()
        if tok.text != text or tok.kind != "op":
            raise self.error(f"expected {what}", tok)
        return self.next()

    def error(self, message: str, tok: Token) -> IntentError:
        if tok.kind == "end":
            last = self.tokens[-1]
            return IntentError(f"{message} after '{last.text}'", last.start, last.end)
        return IntentError(f"{message}, found '{tok.text}'", tok.start, tok.end)

    # -- statements ------------------------------------------------------------------------
    def statement(self) -> Statement:
        first = self.tokens[0]
        if not looks_like_statement(self.tokens):
            if first.kind == "name" and self.peek(1).text == "=":
                return self.option()
            stmt_end = self.tokens[-1].end
            raise IntentError("expected a declaration (x: f32[1024]), an assignment (y = ...) "
                              "or an option (arch=sm_90)", first.start, stmt_end)
        if self.peek(1).text == "=":
            target = self.next()
            self.next()
            value = self.expression()
            self.finish()
            if (depth := tree_depth(value)) > MAX_NESTING:
                raise IntentError(f"the expression nests {depth} levels deep (at most {MAX_NESTING}: "
                                  "parentheses, calls and chained operators all count); split it "
                                  "into several statements (t = ...; y = ...)", value.start, value.end)
            return Assignment(Span(target.text, target.start, target.end), value, target.start, value.end)
        return self.declaration()

    def finish(self) -> None:
        if self.peek().kind != "end":
            raise self.error("expected ';' or the end of the statement", self.peek())

    def option(self) -> OptionSetting:
        key = self.next()
        eq = self.next()
        rest = self.tokens[self.i:]
        if not rest:
            raise IntentError(f"option {key.text}= needs a value", key.start, eq.end)
        self.i = len(self.tokens)
        value = Span(self.text[rest[0].start:rest[-1].end], rest[0].start, rest[-1].end)
        return OptionSetting(Span(key.text, key.start, key.end), value)

    def declaration(self) -> Declaration:
        names = [self.name_span("a tensor name")]
        while self.accept(","):
            names.append(self.name_span("a tensor name"))
        self.expect(":", "':' and a type such as f32[1024]")
        dtype = self.name_span("a dtype such as f32")
        dims: list[Span] | None = None
        end = dtype.end
        if self.accept("["):
            dims = []
            if self.peek().text != "]":
                dims.append(self.dim())
                while self.accept(","):
                    if self.peek().text == "]":
                        break
                    dims.append(self.dim())
            end = self.expect("]", "',' or ']' in the shape").end
        self.finish()
        return Declaration(names, dtype, dims, names[0].start, end)

    def name_span(self, what: str) -> Span:
        tok = self.peek()
        if tok.kind != "name":
            raise self.error(f"expected {what}", tok)
        self.next()
        return Span(tok.text, tok.start, tok.end)

    def dim(self) -> Span:
        tok = self.peek()
        if tok.kind not in ("name", "number"):
            raise self.error("expected a dimension (an integer or a symbol such as N)", tok)
        self.next()
        return Span(tok.text, tok.start, tok.end)

    # -- expressions -----------------------------------------------------------------------
    def too_deep(self, tok: Token) -> IntentError:
        return IntentError(f"the expression nests more than {MAX_NESTING} levels deep; "
                           "split it into several statements (t = ...; y = ...)", tok.start, tok.end)

    def expression(self) -> Expr:
        tok = self.peek()
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise self.too_deep(tok)
        try:
            return self.comparison()
        finally:
            self.nesting -= 1

    def comparison(self) -> Expr:
        left = self.bitor()
        if self.peek().text in COMPARISONS and self.peek().kind == "op":
            op = self.next().text
            right = self.bitor()
            if self.peek().text in COMPARISONS and self.peek().kind == "op":
                tok = self.peek()
                raise IntentError("chained comparisons are not supported; combine them with &",
                                  tok.start, tok.end)
            left = Binary(left.start, right.end, op, left, right)
        return left

    def bitor(self) -> Expr:
        left = self.bitand()
        while self.accept("|"):
            right = self.bitand()
            left = Binary(left.start, right.end, "|", left, right)
        return left

    def bitand(self) -> Expr:
        left = self.arith()
        while self.accept("&"):
            right = self.arith()
            left = Binary(left.start, right.end, "&", left, right)
        return left

    def arith(self) -> Expr:
        left = self.term()
        while self.peek().text in ("+", "-") and self.peek().kind == "op":
            op = self.next().text
            right = self.term()
            left = Binary(left.start, right.end, op, left, right)
        return left

    def term(self) -> Expr:
        left = self.factor()
        while self.peek().text in ("*", "/", "@") and self.peek().kind == "op":
            op = self.next().text
            right = self.factor()
            left = Binary(left.start, right.end, op, left, right)
        return left

    def factor(self) -> Expr:
        if self.peek().text in ("-", "+", "~") and self.peek().kind == "op":
            tok = self.next()
            self.nesting += 1
            if self.nesting > MAX_NESTING:
                raise self.too_deep(tok)
            try:
                operand = self.factor()
            finally:
                self.nesting -= 1
            return Unary(tok.start, operand.end, tok.text, operand)
        return self.power()

    def power(self) -> Expr:
        base = self.postfix()
        if self.accept("**"):
            exponent = self.factor()
            return Binary(base.start, exponent.end, "**", base, exponent)
        return base

    def postfix(self) -> Expr:
        expr = self.atom()
        while True:
            if self.accept("."):
                attr = self.name_span("an attribute name")
                expr = Attribute(expr.start, attr.end, expr, attr.text, attr.start)
            elif self.peek().text == "(" and self.peek().kind == "op":
                expr = self.call(expr)
            else:
                return expr

    def call(self, func: Expr) -> Call:
        self.next()
        args: list[Expr] = []
        keywords: list[Keyword] = []
        while self.peek().text != ")":
            if self.peek().kind == "name" and self.peek(1).text == "=" and self.peek(1).kind == "op":
                key = self.next()
                self.next()
                value = self.expression()
                keywords.append(Keyword(key.text, value, key.start, value.end))
            else:
                if keywords:
                    tok = self.peek()
                    raise IntentError("a positional argument cannot follow keyword arguments",
                                      tok.start, tok.end)
                args.append(self.expression())
            if not self.accept(","):
                break
        close = self.expect(")", "',' or ')' in the argument list")
        return Call(func.start, close.end, func, args, keywords)

    def atom(self) -> Expr:
        tok = self.peek()
        if tok.kind == "name":
            self.next()
            if tok.text in ("True", "False", "None"):
                return Literal(tok.start, tok.end, {"True": True, "False": False, "None": None}[tok.text])
            return Name(tok.start, tok.end, tok.text)
        if tok.kind == "number":
            self.next()
            is_int = all(c.isdigit() for c in tok.text)
            return Literal(tok.start, tok.end, int(tok.text) if is_int else float(tok.text))
        if tok.kind == "string":
            self.next()
            return Literal(tok.start, tok.end, tok.text[1:-1])
        if tok.text in ("(", "[") and tok.kind == "op":
            return self.group()
        raise self.error("expected an expression", tok)

    def group(self) -> Expr:
        open_tok = self.next()
        close = ")" if open_tok.text == "(" else "]"
        items: list[Expr] = []
        trailing_comma = False
        while self.peek().text != close:
            items.append(self.expression())
            trailing_comma = bool(self.accept(","))
            if not trailing_comma:
                break
        end = self.expect(close, f"',' or '{close}'").end
        if open_tok.text == "(" and len(items) == 1 and not trailing_comma:
            inner = items[0]
            # Parentheses only group: widen the range so errors underline them too.
            inner.start, inner.end = open_tok.start, end
            return inner
        if open_tok.text == "(" and not items:
            raise IntentError("empty parentheses", open_tok.start, end)
        return Seq(open_tok.start, end, items)
