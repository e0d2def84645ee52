"""Word intents (English or Chinese) → the same `Program` the tensor form would give.

The parser picks out, each with its character range: `key=value` options, one operation (plus
activations and a bias for GEMM/convolution epilogues), shapes, a dtype, a target GPU, a goal
and strategy hints. It never guesses an operation or a size: what it cannot pin down is an
`IntentError` saying what is missing. Two defaults are PyTorch's own: f32 when no dtype is
named, and, when no direction is named, softmax/cumsum along the last dimension and reductions
over all of them. Low-precision GEMMs accumulate in f32 (set in `parse.parse_intent`).
Readings that are the only ones possible are taken: "multiply" between two matrices that do not
broadcast but chain is their product, and a lone number is the other operand of a single product
or sum of one tensor. Arithmetic the parser does not build (squares, logarithms, division, ...)
is refused with its range rather than dropped, since the rest would mean something else.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..arch import resolve
from ..ir import ops
from ..ir.dtypes import DTYPES, DType
from ..ir.graph import Node, Program, Shape, TensorDecl
from . import composites
from . import lexicon as lx
from .errors import IntentError
from .options import OPTION_KEYS, normalize_option
from .unsupported import unsupported_words


@dataclass(frozen=True)
class Mention:
    kind: str
    start: int
    end: int
    match: re.Match

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end


@dataclass(frozen=True)
class ShapeMention:
    dims: tuple[int, ...]
    start: int
    end: int


# How sizes are written, each with the capture groups giving the dims in order (None: every
# number of the match, or the one captured length). A dtype named between a count and its noun
# ("1000 float32 elements", "1000 个 float32 元素") is already claimed, so the nouns are lookaheads.
_ELEMENT_NOUN = r"(?:elements?|values|floats|numbers|entries)"
# Two or more named sizes in a row ("batch=32, seq=512, hidden=768"): the tensor's dims in order.
# Names of one letter (M=, N=, K= of a GEMM) and the options and attributes words take are not sizes.
_NOT_A_DIM = (r"(?:budget|eps|epsilon|stride|padding|dilation|groups|dim|kernel|window|pool|arch|goal"
              r"|precision)\b")
_NAMED_DIM = rf"(?!{_NOT_A_DIM})[a-z_][a-z_]+\s*[=:]\s*\d+"
_NAMED_DIMS = rf"(?<![a-z0-9_]){_NAMED_DIM}(?:\s*[,，、;]?\s*{_NAMED_DIM})+(?![0-9.])"
_SHAPE_PATTERNS: list[tuple[str, tuple[int, ...] | None]] = [
    (r"(?<![a-z0-9_.])\d+(?:\s*(?:[x*]|by)\s*\d+)+(?![0-9])", None),          # 300x13, 300 by 13
    (r"\[\s*\d+(?:\s*[,，]\s*\d+)*\s*\]", None),                            # [8, 12, 40]
    (r"[(（]\s*\d+(?:\s*[,，]\s*\d+)+\s*[)）]", None),                         # (33, 120)
    (lx.w(r"(\d+)\s*rows?\s*(?:and|,|by|x)?\s*(\d+)\s*(?:columns?|cols?)"), (1, 2)),
    (lx.w(r"(\d+)\s*(?:columns?|cols?)\s*(?:and|,|by|x)?\s*(\d+)\s*rows?"), (2, 1)),
    (r"(\d+)\s*行\s*[,，、]?\s*(\d+)\s*列", (1, 2)),                             # 25 行 160 列
    (r"(?<![a-z0-9_.])(\d+)\s*-?\s*(?:" + _ELEMENT_NOUN + r"|个元素|元素)", None),
    (r"(?<![a-z0-9_.])(\d+)(?=\s+[a-z0-9]+\s+" + _ELEMENT_NOUN + r"(?![a-z]))", None),
    (r"(?<![a-z0-9_.])(\d+)\s*个(?=[^,，。;；]{0,10}?(?:元素|数))", None),   # 1000 个 float32 / 半精度元素
    (_NAMED_DIMS, None),                                                     # batch=32, seq=512
    (lx.w(r"(?:vector|array) of (?:size |length )?(\d+)|length\s*(\d+)")
     + r"|长度为?\s*(\d+)|(\d+)\s*维向量", None),
]


def _subtrahend(low: str, number: re.Match) -> bool:
    """Whether the words subtract this number from the tensor: "subtract 2 from ...",
    "... minus 2", "减去 2"."""
    return bool(re.match(r"\s*from\b", low[number.end():])
                or re.search(r"(?:minus|减去?)\s*$", low[:number.start()]))


def _lower(text: str) -> str:
    """`text` lower-cased character by character, so offsets stay valid."""
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


class _Scanner:
    """Finds vocabulary in the intent; a character claimed by one mention is not matched again."""

    def __init__(self, text: str):
        self.low = _lower(text).replace("×", "x")
        self.taken = [False] * len(text)

    def claim(self, start: int, end: int) -> None:
        for i in range(start, end):
            self.taken[i] = True

    def find(self, table: list[tuple[str, str]]) -> list[Mention]:
        found: list[Mention] = []
        for kind, pattern in table:
            for m in re.finditer(pattern, self.low):
                if m.end() > m.start() and not any(self.taken[m.start():m.end()]):
                    found.append(Mention(kind, m.start(), m.end(), m))
                    self.claim(m.start(), m.end())
        return sorted(found, key=lambda m: m.start)

    def shapes(self) -> list[ShapeMention]:
        out: list[ShapeMention] = []
        for pattern, order in _SHAPE_PATTERNS:
            for m in re.finditer(pattern, self.low):
                if any(self.taken[m.start():m.end()]):
                    continue
                groups = [g for g in m.groups() if g]
                if order is not None:      # "160 columns and 25 rows": the captures in row order
                    dims = tuple(int(m.group(g)) for g in order if m.group(g))
                elif groups:
                    dims = (int(groups[0]),)
                else:
                    dims = tuple(int(d) for d in re.findall(r"\d+", m.group()))
                out.append(ShapeMention(dims, m.start(), m.end()))
                self.claim(m.start(), m.end())
        return sorted(out, key=lambda s: s.start)

    def number(self, pattern: str) -> tuple[int, int, int] | None:
        """The first integer captured by `pattern` (value, start, end of the match)."""
        for m in re.finditer(pattern, self.low):
            if not any(self.taken[m.start():m.end()]):
                self.claim(m.start(), m.end())
                value = next(g for g in m.groups() if g is not None)
                return int(value), m.start(), m.end()
        return None


def parse_words(text: str, *, precision: DType | None = None,
                default_shape: tuple[int, ...] | None = None) -> Program:
    scan = _Scanner(text)
    options = _options(text, scan)
    if precision is None and "precision" in options:
        precision = DTYPES.get(options["precision"])   # None for tf32 (f32 data)
    _target(text, scan, options)
    _goal_and_hints(scan, options)
    dtype = precision or _dtype(text, scan)
    mentions = scan.find(lx.OPERATIONS)
    return _Builder(text, scan, dtype, mentions, default_shape).program(options)


def annotations(text: str, start: int, end: int) -> dict[str, str]:
    """The target, goal and hints that the words in `text[start:end]` name (for word statements
    inside a tensor-form intent)."""
    scan = _Scanner(text)
    scan.claim(0, start)
    scan.claim(end, len(text))
    options: dict[str, str] = {}
    _target(text, scan, options)
    _goal_and_hints(scan, options)
    return options


# ---------------------------------------------------------------------------------------------
# Options, target, goal, hints, dtype

_OPTION = re.compile(rf"(?<![A-Za-z0-9_])({'|'.join(OPTION_KEYS)})\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s,;，；]+)")


def _options(text: str, scan: _Scanner) -> dict[str, str]:
    options: dict[str, str] = {}
    for m in _OPTION.finditer(text):
        try:
            options.update(normalize_option(m.group(1), m.group(2)))
        except ValueError as e:
            raise IntentError(str(e), m.start(2), m.end(2)) from None
        scan.claim(m.start(), m.end())
    return options


def _target(text: str, scan: _Scanner, options: dict[str, str]) -> None:
    mentions = scan.find(lx.ARCH_PATTERNS)
    if "arch" in options:
        return
    chosen: dict[str, str] = {}
    for m in mentions:
        digits = [g for g in m.match.groups() if g]
        if m.kind in ("sm", "cc"):
            spec_name, gpu = f"sm_{digits[0]}{digits[1]}", None
        elif m.kind == "family":
            spec_name, gpu = lx.FAMILIES[m.match.group()], None
        else:
            gpu = text[m.start:m.end].strip()
            spec_name = None
        try:
            spec = resolve(gpu or spec_name)
        except KeyError as e:
            raise IntentError(str(e.args[0]), m.start, m.end) from None
        if chosen and chosen["arch"] != spec.name:
            raise IntentError(f"two different targets: {chosen['arch']} and {spec.name}", m.start, m.end)
        chosen = {"arch": spec.name, **({"gpu": gpu} if gpu else {})}
    options.update(chosen)


def _goal_and_hints(scan: _Scanner, options: dict[str, str]) -> None:
    goals = scan.find(lx.GOALS)
    if goals and "goal" not in options:
        options["goal"] = goals[0].kind
    hints = [m.kind for m in scan.find(lx.HINTS)]
    if hints and "hints" not in options:
        options["hints"] = ",".join(dict.fromkeys(hints))


def _dtype(text: str, scan: _Scanner) -> DType:
    found = scan.find(lx.DTYPES)
    kinds = {m.kind for m in found}
    if len(kinds) > 1:
        second = next(m for m in found if m.kind != found[0].kind)
        raise IntentError(f"two element types named: {found[0].kind} and {second.kind} (say one, or write "
                          "the tensor form for mixed types)", second.start, second.end)
    return DTYPES[found[0].kind] if found else DTYPES["f32"]


# ---------------------------------------------------------------------------------------------
# The computation

class _Builder:
    def __init__(self, text: str, scan: _Scanner, dtype: DType, mentions: list[Mention],
                 default_shape: tuple[int, ...] | None):
        self.text = text
        self.scan = scan
        self.dtype = dtype
        self.default_shape = default_shape
        self.anchors = [m for m in mentions if m.kind in lx.ANCHORS]
        self.binaries = [m for m in mentions if m.kind in lx.BINARY]
        self.activations = [m for m in mentions if m.kind in lx.ACTIVATIONS]
        self.bias = next((m for m in mentions if m.kind == "bias"), None)
        self.generic_activation = next((m for m in mentions if m.kind == "activation"), None)
        self.inputs: dict[str, TensorDecl] = {}
        self.found_shapes: list[ShapeMention] | None = None

    def error(self, message: str, where: tuple[int, int] | None = None) -> IntentError:
        start, end = where or (0, len(self.text.rstrip()))
        return IntentError(message, start, end)

    def program(self, options: dict[str, str]) -> Program:
        # Before the operations: "前k个最大值" must not become a max, nor "attention" a softmax.
        if (unsupported := unsupported_words(self.text)) is not None:
            raise IntentError(*unsupported)
        if unread := self.scan.find(lx.UNREAD):   # after the operations claimed theirs ("square root")
            word = self.text[unread[0].start:unread[0].end]
            raise self.error(f"'{word}' ({unread[0].kind}) is not understood in words yet; write the tensor "
                             "form, e.g. y = sum(x * x, dim=1); x: f32[4096, 1024]", unread[0].span)
        anchor = self._anchor()
        if anchor is None and not self.binaries and not self.activations:
            if self.generic_activation:
                raise self.error("which activation? name one: relu, gelu, silu, sigmoid, tanh, exp",
                                 self.generic_activation.span)
            raise self.error("could not tell which operation to generate: name one (matrix multiplication, "
                             "softmax, sum, layer norm, relu, ...) or write the tensor form, e.g. "
                             "y = softmax(x, dim=1); x: f32[4096, 1024]")
        if anchor is not None and anchor.kind in lx.GEMM_LIKE:
            node = self._gemm_like(anchor)
        elif anchor is not None:
            node = self._single_input(anchor)
        else:
            node = self._elementwise()
        output = "C" if anchor is not None and anchor.kind in ("matmul", "bmm") else "y"
        return Program(self.inputs, output, node, {}, options, self.text)

    def _anchor(self) -> Mention | None:
        if not self.anchors:
            return None
        first = self.anchors[0]
        for other in self.anchors[1:]:
            if other.kind != first.kind:
                raise self.error(f"this intent names two operations ({_name(first.kind)} and "
                                 f"{_name(other.kind)}); one kernel serves one — write two intents",
                                 other.span)
        if first.kind not in lx.GEMM_LIKE:
            # a layer or group norm's bias is its own learned shift, not an epilogue
            bias = [self.bias] if self.bias and first.kind not in ("layer_norm", "group_norm") else []
            extra = self.activations or self.binaries or bias
            if extra:
                raise self.error(f"{_name(extra[0].kind)} cannot be fused with {_name(first.kind)} in words; "
                                 "write the tensor form", extra[0].span)
        return first

    def _input(self, name: str, shape: Shape) -> Node:
        self.inputs[name] = TensorDecl(name, self.dtype, tuple(shape))
        return ops.input_tensor(name, self.dtype, tuple(shape))

    def _make(self, op: str, args: list[Node], where: tuple[int, int], **attrs) -> Node:
        try:
            return ops.make(op, args, **attrs)
        except ops.OpError as e:
            raise self.error(str(e), where) from None

    def _shapes(self, mention: Mention, example: str) -> list[ShapeMention]:
        if self.found_shapes is None:
            self.found_shapes = self.scan.shapes()
        shapes = self.found_shapes
        if not shapes and self.default_shape:
            shapes = [ShapeMention(tuple(self.default_shape), mention.start, mention.end)]
        if not shapes:
            raise self.error(f"no shape given for the {_name(mention.kind)}: say e.g. {example}",
                             mention.span)
        return shapes

    def _one_shape(self, mention: Mention, example: str) -> ShapeMention:
        shapes = self._shapes(mention, example)
        for other in shapes[1:]:
            if other.dims != shapes[0].dims:
                raise self.error(f"two different shapes given ({_dims(shapes[0])} and {_dims(other)}) for "
                                 f"one {_name(mention.kind)}", (other.start, other.end))
        return shapes[0]

    # -- one input: reductions, softmax, norms, scan, transpose, pooling ------------------------
    def _single_input(self, anchor: Mention) -> Node:
        kind = anchor.kind
        if kind in ("max_pool2d", "avg_pool2d"):
            return self._pool(anchor)
        shape = self._one_shape(anchor, "4096x1024")
        x = self._input("x", shape.dims)
        where = (shape.start, shape.end)
        dim = self._direction(len(shape.dims))
        if kind == "transpose":
            if x.rank < 2:
                raise self.error("a transpose needs a matrix (e.g. 4096x1024)", where)
            return self._make("permute", [x], anchor.span,
                              dims=tuple(range(x.rank - 2)) + (x.rank - 1, x.rank - 2))
        if kind in ("softmax", "log_softmax", "cumsum", "cumprod"):
            return self._make(kind, [x], anchor.span, dim=-1 if dim is None else dim)
        if kind in ("instance_norm", "batch_norm"):   # batch norm from words: the batch's statistics
            build = composites.instance_norm if kind == "instance_norm" else composites.batch_norm
            try:
                return build(x, None, None, 1e-5)
            except ops.OpError as e:
                raise self.error(str(e), where) from None
        if kind in ("layer_norm", "rms_norm"):
            return self._norm(kind, x, anchor)
        if kind == "group_norm":
            return self._group_norm(x, anchor, where)
        keepdim = self.scan.find([("keepdim", lx.KEEPDIM)]) != []
        if kind == "logsumexp":
            try:
                return composites.logsumexp(x, -1 if dim is None else dim, keepdim)
            except ops.OpError as e:
                raise self.error(str(e), where) from None
        return self._make(kind, [x], anchor.span, dim=dim, keepdim=keepdim)

    def _direction(self, rank: int) -> int | None:
        explicit = self.scan.number(lx.EXPLICIT_DIM)
        if explicit is not None:
            dim, start, end = explicit
            if not -rank <= dim < rank:
                raise self.error(f"dim {dim} is out of range for a tensor of rank {rank}", (start, end))
            return dim
        found = self.scan.find([("last", lx.ROW_WISE), ("first", lx.COLUMN_WISE)])
        if not found:
            return None
        if found[0].kind == "first" and rank < 2:
            raise self.error("a vector has no columns", found[0].span)
        return -1 if found[0].kind == "last" else -2

    def _eps(self) -> float | None:
        m = re.search(lx.w(r"(?:eps|epsilon)\s*[=:]?\s*(\d+(?:\.\d*)?(?:e-?\d+)?)"), self.scan.low)
        return float(m.group(1)) if m else None

    def _norm(self, kind: str, x: Node, anchor: Mention) -> Node:
        eps = self._eps()
        width = (x.shape[-1],)
        params = []
        if not self.scan.find([("no_affine", lx.NO_AFFINE)]):   # nn.LayerNorm / nn.RMSNorm: learned
            params.append(self._input("weight", width))
            if kind == "layer_norm":
                params.append(self._input("bias", width))
        return self._make(kind, [x, *params], anchor.span, eps=eps)

    def _group_norm(self, x: Node, anchor: Mention, where: tuple[int, int]) -> Node:
        """nn.GroupNorm: the number of groups from the words, a learned per-channel weight and
        bias unless the words say not."""
        groups = self.scan.number(lx.GROUPS)
        if groups is None:
            raise self.error("no group count given for the group norm: say e.g. 32 groups", anchor.span)
        weight = bias = None
        if not self.scan.find([("no_affine", lx.NO_AFFINE)]) and x.rank >= 2:
            weight, bias = self._input("weight", (x.shape[1],)), self._input("bias", (x.shape[1],))
        try:
            return composites.group_norm(x, groups[0], weight, bias, self._eps() or 1e-5)
        except ops.OpError as e:
            raise self.error(str(e), where) from None

    def _pool(self, anchor: Mention) -> Node:
        adaptive = re.search(lx.w(r"adaptive|global") + r"|自适应|全局", self.scan.low)
        if adaptive:    # a size there is the output's, not a window: pooling it as one is wrong
            raise self.error("adaptive or global (output-sized) pooling is not understood in words; the "
                             "words form pools with a window, e.g. 2x2 window",
                             (adaptive.start(), adaptive.end()))
        kernel = self.scan.number(lx.w(r"(?:kernel|window|pool)(?: size)?\s*(?:of\s*)?[=:]?\s*(\d+)")
                                  + r"|(?:窗口|核)(?:大小)?\s*为?\s*(\d+)")
        stride = self.scan.number(lx.w(r"stride\s*[=:]?\s*(\d+)") + r"|步长\s*为?\s*(\d+)")
        padding = self.scan.number(lx.w(r"padding\s*[=:]?\s*(\d+)") + r"|填充\s*为?\s*(\d+)")
        shapes = self._shapes(anchor, "8x64x56x56 (NCHW) with a 2x2 window")
        data = [s for s in shapes if len(s.dims) == 4]
        windows = [s for s in shapes if len(s.dims) == 2]
        if not data:
            raise self.error(f"pooling needs an NCHW input shape such as 8x64x56x56, got {_dims(shapes[0])}",
                             (shapes[0].start, shapes[0].end))
        if windows:
            size: int | tuple[int, ...] = windows[0].dims
        elif kernel:
            size = kernel[0]
        else:
            raise self.error("no pooling window given: say e.g. 2x2 window", anchor.span)
        x = self._input("x", data[0].dims)
        attrs = {"kernel_size": size}
        if stride:
            attrs["stride"] = stride[0]
        if padding:
            attrs["padding"] = padding[0]
        return self._make(anchor.kind, [x], anchor.span, **attrs)

    # -- GEMM, batched GEMM, convolution, with a bias/activation epilogue ----------------------
    def _gemm_like(self, anchor: Mention) -> Node:
        bias = self.bias or next((b for b in self.binaries if b.kind == "add"), None)
        if anchor.kind == "conv2d":
            return self._epilogue(self._conv(anchor, with_bias=bias is not None), None)
        return self._epilogue(self._matmul(anchor), bias)

    def _epilogue(self, product: Node, bias: Mention | None) -> Node:
        """A product's bias (one per output column) and activations, in the order PyTorch's
        `act(x @ W + b)` applies them."""
        node = product
        if bias is not None:
            node = self._make("add", [node, self._input("bias", (node.shape[-1],))], bias.span)
        for act in self.activations:
            node = self._activation(act, node)
        return node

    def _matmul(self, anchor: Mention) -> Node:
        mnk = {k: self.scan.number(lx.w(rf"{k}\s*=\s*(\d+)")) for k in "mnk"}
        if all(mnk.values()):
            m, n, k = (mnk[c][0] for c in "mnk")
            a_shape, b_shape = (m, k), (k, n)
        else:
            a_shape, b_shape = self._operand_shapes(anchor)
        if anchor.kind == "bmm" or len(a_shape) == 3:
            a_shape, b_shape = self._batched(anchor, a_shape, b_shape)
        a = self._input("A", a_shape)
        b = self._input("B", b_shape)
        return self._make("matmul", [a, b], anchor.span)

    def _operand_shapes(self, anchor: Mention) -> tuple[tuple[int, ...], tuple[int, ...]]:
        shapes = self._shapes(anchor, "1024x1024")
        first = shapes[0]
        if len(shapes) >= 2:
            a, b = shapes[0].dims, shapes[1].dims
            if len(a) == len(b) and a[-1] != b[-2]:
                raise self.error(f"the shapes do not multiply: {_dims(shapes[0])} @ {_dims(shapes[1])} "
                                 f"({a[-1]} vs {b[-2]})", (shapes[1].start, shapes[1].end))
            return a, b
        dims = first.dims
        if len(dims) == 2 and dims[0] == dims[1]:
            return dims, dims
        if len(dims) == 3 and anchor.kind == "matmul":
            m, n, k = dims   # one triple for a GEMM is M x N x K, as in cuBLAS
            return (m, k), (k, n)
        if len(dims) == 3 and dims[1] == dims[2]:   # a batch of square matrices
            return dims, dims
        raise self.error(f"one shape ({_dims(first)}) does not fix both operands: give both, e.g. "
                         "4096x1024 @ 1024x512, or M=, N=, K=", (first.start, first.end))

    def _batched(self, anchor: Mention, a: tuple[int, ...], b: tuple[int, ...]):
        batch = self.scan.number(lx.w(r"batch(?:es)?(?: size)?\s*(?:of\s*)?[=:]?\s*(\d+)"
                                      r"|(\d+)\s*batch(?:es)?")
                                 + r"|批(?:量|次)?(?:大小)?\s*为?\s*(\d+)")
        if len(a) == 3 and len(b) == 3:
            return a, b
        if len(a) == 3:
            return a, (a[0], *b)
        if batch is None:
            raise self.error("no batch size given for the batched matrix multiplication: say e.g. "
                             "batch 8, or 8x128x64 @ 8x64x32", anchor.span)
        return (batch[0], *a), (batch[0], *b)

    def _conv(self, anchor: Mention, with_bias: bool) -> Node:
        """A 2-D convolution; `with_bias`: plus one bias per output channel."""
        shapes = self._shapes(anchor, "8x3x224x224 (NCHW) with 64 3x3 filters")
        data = [s for s in shapes if len(s.dims) == 4]
        windows = [s for s in shapes if len(s.dims) == 2]
        if not data:
            raise self.error("a convolution needs an NCHW input shape such as 8x3x224x224", anchor.span)
        filters = self.scan.number(lx.w(r"(\d+)\s*(?:output channels|filters|kernels|out channels)")
                                   + r"|(?<![a-z0-9_.])(\d+)\s+(?=\d+\s*x\s*\d+\s*(?:filters|kernels))"
                                   + r"|输出通道数?\s*为?\s*(\d+)"
                                   + r"|(\d+)\s*个\s*"
                                   + r"(?=(?:\d+\s*x\s*\d+\s*的?\s*)?(?:输出通道|卷积核|滤波器))")
        n, c, h, wd = data[0].dims
        if filters is None and len(data) > 1:     # "... with a [64, 3, 7, 7] kernel": out, in, kh, kw
            out_channels, in_channels, *window = data[1].dims
            if in_channels != c:
                raise self.error(f"the filter shape {_dims(data[1])} takes {in_channels} input channels but "
                                 f"the input {_dims(data[0])} has {c}", (data[1].start, data[1].end))
            filters, windows = (out_channels, data[1].start, data[1].end), [ShapeMention(tuple(window), 0, 0)]
        if filters is None:
            raise self.error("say how many output channels the convolution has, e.g. 64 filters", anchor.span)
        if not windows:
            raise self.error("no filter size given for the convolution: say e.g. 3x3 filters", anchor.span)
        stride = self.scan.number(lx.w(r"stride\s*[=:]?\s*(\d+)") + r"|步长\s*为?\s*(\d+)")
        padding = self.scan.number(lx.w(r"padding\s*[=:]?\s*(\d+)") + r"|填充\s*为?\s*(\d+)")
        x = self._input("x", (n, c, h, wd))
        w = self._input("w", (filters[0], c, *windows[0].dims))
        attrs = {"stride": stride[0] if stride else 1, "padding": padding[0] if padding else 0}
        operands = [x, w, self._input("bias", (filters[0],))] if with_bias else [x, w]
        return self._make("conv2d", operands, anchor.span, **attrs)

    # -- elementwise --------------------------------------------------------------------------
    def _elementwise(self) -> Node:
        first = (self.binaries or self.activations)[0]
        shapes = self._shapes(first, "1024x1024 or 1048576 elements")
        if self.binaries:
            node = self._binary(self.binaries[0], shapes)
        else:
            node = self._input("x", self._one_shape(first, "1024x1024 or 1048576 elements").dims)
        if self.bias is not None and node.op != "matmul":
            raise self.error("a bias is added to a matrix product or a convolution; for an elementwise sum "
                             "say 'add', or write the tensor form", self.bias.span)
        return self._epilogue(node, self.bias)

    def _binary(self, op: Mention, shapes: list[ShapeMention]) -> Node:
        for extra in self.binaries[1:]:
            if extra.kind != op.kind:
                raise self.error(f"two arithmetic operations ({op.kind}, {extra.kind}); write the tensor "
                                 "form for expressions", extra.span)
        if (scalar := self._scalar(op, shapes)) is not None:
            return self._make(op.kind, [self._input("x", shapes[0].dims), scalar], op.span)
        if op.kind == "mul" and _chain(shapes):   # "multiply A (48x64) by B (64x32)": only a product fits
            a, b = self._input("A", shapes[0].dims), self._input("B", shapes[1].dims)
            return self._make("matmul", [a, b], op.span)
        a = self._input("a", shapes[0].dims)
        b = self._input("b", shapes[1].dims if len(shapes) > 1 else shapes[0].dims)
        where = (shapes[1].start, shapes[1].end) if len(shapes) > 1 else op.span
        return self._make(op.kind, [a, b], where)

    def _scalar(self, op: Mention, shapes: list[ShapeMention]) -> Node | None:
        """The number a product, sum or difference takes as its other operand ("multiply x by
        0.5", "add 1", "subtract 1.5 from x", "x minus 2", "减去 2"), or None when there is none.
        A difference whose order the words do not give, or an order of operations they cannot pin
        down, is refused."""
        taken = self.scan.taken
        numbers = [m for m in re.finditer(lx.NUMBER, self.scan.low) if not any(taken[m.start():m.end()])]
        if not numbers:
            return None
        ordered = op.kind in ("mul", "add") or (op.kind == "sub" and _subtrahend(self.scan.low, numbers[0]))
        if not ordered or len(numbers) > 1 or len(shapes) > 1 or self.activations:
            raise self.error("a number as an operand in words is read only for one product, sum or "
                             "difference of one tensor (e.g. multiply a 1024x1024 matrix by 0.5, subtract 1 "
                             "from it); "
                             "write the tensor form, e.g. y = tanh(x) * 0.5 + 1; x: f32[1000]",
                             numbers[0].span())
        text = numbers[0].group()
        return ops.const(float(text) if re.search(r"[.e]", text) else int(text))

    def _activation(self, act: Mention, x: Node) -> Node:
        return self._make(act.kind, [x], act.span)


def _chain(shapes: list[ShapeMention]) -> bool:
    """Two matrices (or batches) that cannot be multiplied element by element but can as a
    matrix product."""
    if len(shapes) != 2:
        return False
    a, b = shapes[0].dims, shapes[1].dims
    return (len(a) >= 2 and len(b) >= 2 and a[-1] == b[-2] and ops.broadcast_shapes(a, b) is None)


def _name(kind: str) -> str:
    return lx.NAMES.get(kind, kind.replace("_", " "))


def _dims(shape: ShapeMention) -> str:
    return "x".join(map(str, shape.dims))
