"""The functions of the tensor form (PyTorch names and signatures) and how each becomes IR nodes.

A handler receives the bound arguments of one call (values with their character ranges) and
builds nodes through `ops.make` only; an `OpError` is mapped back to the argument or keyword it
blames, so the editor underlines exactly that text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..ir import ops
from ..ir.dtypes import ALIASES, DType, parse_dtype
from ..ir.graph import Node
from . import composites
from .errors import IntentError, did_you_mean

Value = Any   # a Node, or a Python literal (int, float, bool, str, None, tuple)


@dataclass
class Arg:
    value: Value
    start: int
    end: int


@dataclass
class CallSite:
    """One call with its arguments bound to parameter names."""
    func: str
    start: int            # the whole call
    end: int
    args: dict[str, Arg]

    def get(self, name: str, default: Value = None) -> Value:
        arg = self.args.get(name)
        return default if arg is None else arg.value

    def span(self, name: str | None) -> tuple[int, int]:
        arg = self.args.get(name) if name else None
        return (arg.start, arg.end) if arg else (self.start, self.end)

    def error(self, message: str, name: str | None = None) -> IntentError:
        return IntentError(message, *self.span(name))

    def tensor(self, name: str) -> Node:
        """The argument as a node (a number becomes a scalar constant)."""
        value = self.get(name)
        if isinstance(value, Node):
            return value
        if isinstance(value, (int, float)):
            return ops.const(value)
        raise self.error(f"{self.func}'s {name} must be a tensor, got {value!r}", name)

    def number(self, name: str, default: Value = None, *, integer: bool = False) -> Value:
        value = self.get(name, default)
        kinds = (int,) if integer else (int, float)
        if value is None or (isinstance(value, kinds) and not isinstance(value, bool)):
            return value
        what = "an integer" if integer else "a number"
        raise self.error(f"{self.func}'s {name} must be {what}, got {_describe(value)}", name)

    def ints(self, name: str) -> Value:
        """An int, or a tuple of ints (dims, sizes)."""
        value = self.get(name)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return value
        raise self.error(f"{self.func}'s {name} must be an integer or a tuple of integers, "
                         f"got {_describe(value)}", name)


def _describe(value: Value) -> str:
    if isinstance(value, Node):
        return f"a tensor of shape {list(value.shape)}"
    return repr(value)


def build(op: str, site: CallSite, arg_names: list[str], **attrs: Any) -> Node:
    """`ops.make(op, [site's tensors named arg_names], **attrs)`, with OpErrors given a range."""
    tensors = [site.tensor(n) for n in arg_names]
    try:
        return ops.make(op, tensors, **attrs)
    except ops.OpError as e:
        raise _locate(e, site, arg_names, attrs) from None


def _locate(e: ops.OpError, site: CallSite, arg_names: list[str], attrs: dict[str, Any]) -> IntentError:
    if e.attr and e.attr in site.args:
        return site.error(str(e), e.attr)
    if e.arg is not None and e.arg < len(arg_names):
        return site.error(str(e), arg_names[e.arg])
    return site.error(str(e))


# ---------------------------------------------------------------------------------------------
# Handlers, one per function family

def _unary(op: str) -> Callable[[CallSite], Node]:
    def handler(site: CallSite) -> Node:
        return build(op, site, ["input"])
    return handler


def _gelu(site: CallSite) -> Node:
    approximate = site.get("approximate", "none")
    if not isinstance(approximate, str):
        raise site.error("gelu's approximate must be 'none' or 'tanh'", "approximate")
    return build("gelu", site, ["input"], approximate=approximate)


def _leaky_relu(site: CallSite) -> Node:
    return build("leaky_relu", site, ["input"], negative_slope=site.number("negative_slope", 0.01))


def _clamp(site: CallSite) -> Node:
    return build("clamp", site, ["input"], min=site.number("min"), max=site.number("max"))


def _binary(op: str) -> Callable[[CallSite], Node]:
    def handler(site: CallSite) -> Node:
        return build(op, site, ["input", "other"])
    return handler


def _where(site: CallSite) -> Node:
    return build("where", site, ["condition", "input", "other"])


def _reduction(op: str) -> Callable[[CallSite], Node]:
    def handler(site: CallSite) -> Node:
        keepdim = site.get("keepdim", False)
        if not isinstance(keepdim, bool):
            raise site.error(f"{site.func}'s keepdim must be True or False", "keepdim")
        return build(op, site, ["input"], dim=site.ints("dim"), keepdim=keepdim)
    return handler


def _max_or_min(reduction: str, elementwise: str) -> Callable[[CallSite], Node]:
    """torch.max(x) / max(x, dim=1) reduce; torch.max(a, b) is the elementwise maximum."""
    def handler(site: CallSite) -> Node:
        if isinstance(site.get("dim"), Node):    # the second positional argument is a tensor
            site.args["other"] = site.args.pop("dim")
            return build(elementwise, site, ["input", "other"])
        return _reduction(reduction)(site)
    return handler


def _softmax(op: str) -> Callable[[CallSite], Node]:
    def handler(site: CallSite) -> Node:
        if "dim" not in site.args:
            raise site.error(f"{op} needs dim=, e.g. {op}(x, dim=-1)")
        return build(op, site, ["input"], dim=site.number("dim", integer=True))
    return handler


def _normalized_shape(site: CallSite) -> Value:
    value = site.get("normalized_shape")
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if value is None or (isinstance(value, tuple) and all(isinstance(v, int) for v in value)):
        return value
    raise site.error(f"{site.func}'s normalized_shape must be a list of integers such as [1024], "
                     f"got {_describe(value)}", "normalized_shape")


def _layer_norm(site: CallSite) -> Node:
    if "bias" in site.args and "weight" not in site.args:
        raise site.error("layer_norm with a bias but no weight is not supported", "bias")
    names = ["input"] + [n for n in ("weight", "bias") if n in site.args]
    return build("layer_norm", site, names, normalized_shape=_normalized_shape(site),
                 eps=site.number("eps"))


def _rms_norm(site: CallSite) -> Node:
    names = ["input"] + (["weight"] if "weight" in site.args else [])
    return build("rms_norm", site, names, normalized_shape=_normalized_shape(site),
                 eps=site.number("eps"))


def _scan(op: str) -> Callable[[CallSite], Node]:
    def handler(site: CallSite) -> Node:
        if "dim" not in site.args:
            raise site.error(f"{op} needs dim=, e.g. {op}(x, dim=1)")
        return build(op, site, ["input"], dim=site.number("dim", integer=True))
    return handler


def _transpose(site: CallSite) -> Node:
    x = site.tensor("input")
    a = site.number("dim0", integer=True)
    b = site.number("dim1", integer=True)
    if a is None or b is None:
        raise site.error("transpose needs two dims, e.g. transpose(x, 0, 1)")
    try:
        return ops.transpose(x, a, b)
    except ops.OpError as e:
        bad = "dim0" if not -max(x.rank, 1) <= a < max(x.rank, 1) else "dim1"
        raise site.error(str(e), bad) from None


def _t(site: CallSite) -> Node:
    x = site.tensor("input")
    if x.rank > 2:
        raise site.error(f"t() needs a tensor of rank <= 2, got rank {x.rank}", "input")
    return ops.transpose(x, 0, 1)


def _permute(site: CallSite) -> Node:
    dims = site.ints("dims")
    if dims is None:
        raise site.error("permute needs the new order of the dimensions, e.g. permute(x, (1, 0))")
    return build("permute", site, ["input"], dims=dims if isinstance(dims, tuple) else (dims,))


def _matmul(site: CallSite) -> Node:
    return build("matmul", site, ["input", "other"])


def _matmul_any_rank(site: CallSite) -> Node:
    """matmul / mv / dot: vectors as PyTorch treats them (`composites.matmul`)."""
    try:
        return composites.matmul(site.tensor("input"), site.tensor("other"))
    except ops.OpError as e:
        raise _locate(e, site, ["input", "other"], {}) from None


def _conv(op: str) -> Callable[[CallSite], Node]:
    def handler(site: CallSite) -> Node:
        names = ["input", "weight"] + (["bias"] if site.get("bias") is not None else [])
        keys = ("stride", "padding", "dilation", "groups", "output_padding")
        if isinstance(site.get("padding"), str):
            raise site.error("padding must be integers here ('same'/'valid' are not supported)", "padding")
        return build(op, site, names, **{k: site.ints(k) for k in keys if k in site.args})
    return handler


def _pool(op: str) -> Callable[[CallSite], Node]:
    def handler(site: CallSite) -> Node:
        if "kernel_size" not in site.args:
            raise site.error(f"{op} needs kernel_size=, e.g. {op}(x, kernel_size=2)")
        if site.get("return_indices"):
            raise site.error("return_indices=True is not supported", "return_indices")
        if site.get("divisor_override") is not None:
            raise site.error("divisor_override is not supported", "divisor_override")
        attrs = {k: site.ints(k) for k in ("kernel_size", "stride", "padding", "dilation") if k in site.args}
        for flag in ("ceil_mode", "count_include_pad"):
            if flag in site.args:
                value = site.get(flag)
                if not isinstance(value, bool):
                    raise site.error(f"{flag} must be True or False", flag)
                attrs[flag] = value
        return build(op, site, ["input"], **attrs)
    return handler


def _composite(builder: Callable[..., Node], tensors: tuple[str, ...],
               options: Callable[[CallSite], dict[str, Any]] = lambda site: {},
               optional: tuple[str, ...] = ()) -> Callable[[CallSite], Node]:
    """A function written as primitive IR by `builder(*tensors, **options)`; `optional` tensors
    are None when not given. OpErrors point at the blamed argument."""
    def handler(site: CallSite) -> Node:
        args = [site.tensor(n) if n not in optional or site.get(n) is not None else None for n in tensors]
        try:
            return builder(*args, **options(site))
        except ops.OpError as e:
            raise _locate(e, site, list(tensors), {}) from None
    return handler


def _variance(root: bool) -> Callable[[CallSite], Node]:
    """var / std(input, dim, unbiased, keepdim, correction): Bessel's correction unless
    unbiased=False or correction= says otherwise."""
    def handler(site: CallSite) -> Node:
        unbiased = _flag(site, "unbiased", True)
        correction = site.number("correction", 1 if unbiased else 0)
        keepdim = _flag(site, "keepdim", False)
        x = site.tensor("input")
        try:
            return composites.variance(x, site.ints("dim"), float(correction), keepdim, root)
        except ops.OpError as e:
            raise _locate(e, site, ["input"], {"dim": site.get("dim")}) from None
    return handler


def _logsumexp(site: CallSite) -> Node:
    dim = site.ints("dim")
    if dim is None:
        raise site.error("logsumexp needs dim=, e.g. logsumexp(x, dim=1)")
    x = site.tensor("input")
    try:
        return composites.logsumexp(x, dim, _flag(site, "keepdim", False))
    except ops.OpError as e:
        raise _locate(e, site, ["input"], {"dim": dim}) from None


def _flag(site: CallSite, name: str, default: bool) -> bool:
    value = site.get(name, default)
    if not isinstance(value, bool):
        raise site.error(f"{site.func}'s {name} must be True or False", name)
    return value


def _reduction_arg(site: CallSite, default: str = "mean") -> str:
    value = site.get("reduction", default)
    if not isinstance(value, str):
        raise site.error(f"reduction must be a string such as 'mean', got {_describe(value)}", "reduction")
    return value


def _eps(default: float) -> Callable[[CallSite], dict[str, Any]]:
    return lambda site: {"eps": float(site.number("eps", default))}


def _batch_norm(site: CallSite) -> Node:
    training = _flag(site, "training", False)
    if not training and (site.get("running_mean") is None or site.get("running_var") is None):
        raise site.error("batch_norm in eval mode needs running_mean and running_var "
                         "(or training=True to use the batch statistics)")
    eps = float(site.number("eps", 1e-5))
    optional = ("weight", "bias")
    if training:
        return _composite(lambda x, w, b: composites.batch_norm(x, w, b, eps),
                          ("input", "weight", "bias"), optional=optional)(site)
    return _composite(lambda x, rm, rv, w, b: composites.batch_norm_eval(x, rm, rv, w, b, eps),
                      ("input", "running_mean", "running_var", "weight", "bias"), optional=optional)(site)


def _flip(site: CallSite) -> Node:
    dims = site.ints("dims")
    if dims is None:
        raise site.error("flip needs dims, e.g. flip(x, dims=[1])")
    return build("flip", site, ["input"], dims=dims if isinstance(dims, tuple) else (dims,))


def _gather(site: CallSite) -> Node:
    dim = site.number("dim", integer=True)
    if dim is None:
        raise site.error("gather needs dim and index, e.g. gather(x, 1, idx)")
    return build("gather", site, ["input", "index"], dim=dim)


def _embedding(site: CallSite) -> Node:
    if site.get("max_norm") is not None:
        raise site.error("embedding with max_norm (which rewrites the table) is not supported", "max_norm")
    return _composite(composites.embedding, ("input", "weight"))(site)


def _reshape(site: CallSite) -> Node:
    shape = site.ints("shape")
    if shape is None:
        raise site.error(f"{site.func} needs the new shape, e.g. {site.func}(x, (4, -1))")
    return build("reshape", site, ["input"], shape=shape if isinstance(shape, tuple) else (shape,))


def _unsqueeze(site: CallSite) -> Node:
    x = site.tensor("input")
    dim = site.number("dim", integer=True)
    if dim is None or not -x.rank - 1 <= dim <= x.rank:
        raise site.error(f"unsqueeze's dim must be in {-x.rank - 1}..{x.rank}, got {dim}", "dim")
    dim = dim % (x.rank + 1)
    return build("reshape", site, ["input"], shape=x.shape[:dim] + (1,) + x.shape[dim:])


def _dims(site: CallSite) -> tuple[int, ...] | None:
    dims = site.ints("dim")
    return None if dims is None else (dims if isinstance(dims, tuple) else (dims,))


def _norm_p(site: CallSite) -> Value:
    p = site.get("p", "fro")
    if isinstance(p, str) and p not in ("fro", "inf"):
        raise site.error(f"p must be 'fro', inf or a number, got {p!r}", "p")
    return p


def _cast_to(dtype: DType | None) -> Callable[[CallSite], Node]:
    def handler(site: CallSite) -> Node:
        target = dtype
        if target is None:
            name = site.get("dtype")
            target = parse_dtype(name) if isinstance(name, str) else None
            if target is None:
                raise site.error(f"unknown dtype {name!r}" + did_you_mean(str(name), ALIASES), "dtype")
        return build("cast", site, ["input"], dtype=target)
    return handler


@dataclass(frozen=True)
class Function:
    params: tuple[str, ...]          # positional order, as PyTorch's signature
    handler: Callable[[CallSite], Node]
    varargs: bool = False            # permute(x, 1, 0): extra positionals collect into params[1]


_U = ("input",)
_B = ("input", "other")
_RED = ("input", "dim", "keepdim")

FUNCTIONS: dict[str, Function] = {
    **{op: Function(_U, _unary(op)) for op in ("exp", "log", "sqrt", "rsqrt", "abs", "tanh", "sigmoid",
                                               "relu", "silu", "neg")},
    "gelu": Function(("input", "approximate"), _gelu),
    "leaky_relu": Function(("input", "negative_slope"), _leaky_relu),
    "clamp": Function(("input", "min", "max"), _clamp),
    "where": Function(("condition", "input", "other"), _where),
    "pow": Function(("input", "exponent"), lambda site: build("pow", site, ["input", "exponent"])),
    **{name: Function(_B, _binary(op)) for name, op in (
        ("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "div"),
        ("maximum", "maximum"), ("minimum", "minimum"))},
    "max": Function(_RED, _max_or_min("max", "maximum")),
    "min": Function(_RED, _max_or_min("min", "minimum")),
    **{op: Function(_RED, _reduction(op)) for op in ("sum", "mean", "prod", "argmax", "argmin")},
    "softmax": Function(("input", "dim"), _softmax("softmax")),
    "log_softmax": Function(("input", "dim"), _softmax("log_softmax")),
    "layer_norm": Function(("input", "normalized_shape", "weight", "bias", "eps"), _layer_norm),
    "rms_norm": Function(("input", "normalized_shape", "weight", "eps"), _rms_norm),
    "cumsum": Function(("input", "dim"), _scan("cumsum")),
    "transpose": Function(("input", "dim0", "dim1"), _transpose),
    "t": Function(_U, _t),
    "permute": Function(("input", "dims"), _permute, varargs=True),
    "matmul": Function(_B, _matmul_any_rank),
    "mv": Function(_B, _matmul_any_rank),
    "dot": Function(_B, _matmul_any_rank),
    "mm": Function(_B, _matmul),
    "bmm": Function(_B, _matmul),
    **{f"conv{d}d": Function(("input", "weight", "bias", "stride", "padding", "dilation", "groups"),
                             _conv(f"conv{d}d")) for d in (1, 2, 3)},
    **{f"conv_transpose{d}d": Function(("input", "weight", "bias", "stride", "padding", "output_padding",
                                        "groups", "dilation"), _conv(f"conv_transpose{d}d"))
       for d in (1, 2, 3)},
    **{f"max_pool{d}d": Function(("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
                                  "return_indices"), _pool(f"max_pool{d}d")) for d in (1, 2, 3)},
    **{f"avg_pool{d}d": Function(("input", "kernel_size", "stride", "padding", "ceil_mode",
                                  "count_include_pad", "divisor_override"), _pool(f"avg_pool{d}d"))
       for d in (1, 2, 3)},
    "cumprod": Function(("input", "dim"), _scan("cumprod")),
    "flip": Function(("input", "dims"), _flip, varargs=True),
    "gather": Function(("input", "dim", "index"), _gather),
    "index_select": Function(("input", "dim", "index"), _composite(
        lambda x, index, dim: composites.index_select(x, dim, index), ("input", "index"),
        lambda site: {"dim": site.number("dim", 0, integer=True)})),
    "embedding": Function(("input", "weight", "padding_idx", "max_norm"), _embedding),
    "reshape": Function(("input", "shape"), _reshape, varargs=True),
    "view": Function(("input", "shape"), _reshape, varargs=True),
    "unsqueeze": Function(("input", "dim"), _unsqueeze),
    "triu": Function(("input", "diagonal"), _composite(
        lambda x, diagonal: composites.triangle(x, diagonal, True), ("input",),
        lambda site: {"diagonal": site.number("diagonal", 0, integer=True)})),
    "tril": Function(("input", "diagonal"), _composite(
        lambda x, diagonal: composites.triangle(x, diagonal, False), ("input",),
        lambda site: {"diagonal": site.number("diagonal", 0, integer=True)})),
    "diag": Function(("input", "diagonal"), _composite(
        composites.diag, ("input",), lambda site: {"diagonal": site.number("diagonal", 0, integer=True)})),
    "batch_norm": Function(("input", "running_mean", "running_var", "weight", "bias", "training", "momentum",
                            "eps"), _batch_norm),
    "instance_norm": Function(("input", "running_mean", "running_var", "weight", "bias", "use_input_stats",
                               "momentum", "eps"), _composite(
        lambda x, w, b, eps: composites.instance_norm(x, w, b, eps), ("input", "weight", "bias"),
        _eps(1e-5), optional=("weight", "bias"))),
    "group_norm": Function(("input", "num_groups", "weight", "bias", "eps"), _composite(
        lambda x, w, b, groups, eps: composites.group_norm(x, groups, w, b, eps), ("input", "weight", "bias"),
        lambda site: {"groups": site.number("num_groups", integer=True), **_eps(1e-5)(site)},
        optional=("weight", "bias"))),
    "normalize": Function(("input", "p", "dim", "eps"), _composite(
        composites.normalize, ("input",), lambda site: {
            "p": float(site.number("p", 2.0)), "dim": site.number("dim", 1, integer=True),
            "eps": float(site.number("eps", 1e-12))})),
    "norm": Function(("input", "p", "dim", "keepdim"), _composite(
        composites.p_norm, ("input",), lambda site: {
            "p": _norm_p(site), "dims": _dims(site), "keepdim": _flag(site, "keepdim", False)})),
    "cross_entropy": Function(("input", "target", "weight", "size_average", "ignore_index", "reduce",
                               "reduction", "label_smoothing"), _composite(
        composites.cross_entropy, ("input", "target"), lambda site: {
            "reduction": _reduction_arg(site),
            "label_smoothing": float(site.number("label_smoothing", 0.0))})),
    "nll_loss": Function(("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction"),
                         _composite(composites.nll_loss, ("input", "target"),
                                    lambda site: {"reduction": _reduction_arg(site)})),
    "kl_div": Function(("input", "target", "size_average", "reduce", "reduction", "log_target"), _composite(
        composites.kl_div, ("input", "target"), lambda site: {
            "reduction": _reduction_arg(site), "log_target": _flag(site, "log_target", False)})),
    "smooth_l1_loss": Function(("input", "target", "size_average", "reduce", "reduction", "beta"), _composite(
        composites.smooth_l1, ("input", "target"), lambda site: {
            "reduction": _reduction_arg(site), "beta": float(site.number("beta", 1.0)), "huber": False})),
    "huber_loss": Function(("input", "target", "reduction", "delta"), _composite(
        composites.smooth_l1, ("input", "target"), lambda site: {
            "reduction": _reduction_arg(site), "beta": float(site.number("delta", 1.0)), "huber": True})),
    "mse_loss": Function(("input", "target", "size_average", "reduce", "reduction"), _composite(
        composites.mse, ("input", "target"), lambda site: {"reduction": _reduction_arg(site)})),
    "cosine_similarity": Function(("x1", "x2", "dim", "eps"), _composite(
        composites.cosine_similarity, ("x1", "x2"), lambda site: {
            "dim": site.number("dim", 1, integer=True), "eps": float(site.number("eps", 1e-8))})),
    "triplet_margin_loss": Function(("anchor", "positive", "negative", "margin", "p", "eps", "swap",
                                     "size_average", "reduce", "reduction"), _composite(
        composites.triplet_margin, ("anchor", "positive", "negative"), lambda site: {
            "margin": float(site.number("margin", 1.0)), "p": float(site.number("p", 2.0)),
            "eps": float(site.number("eps", 1e-6)), "reduction": _reduction_arg(site)})),
    "scaled_dot_product_attention": Function(("query", "key", "value", "attn_mask", "dropout_p", "is_causal",
                                              "scale"), _composite(
        composites.attention, ("query", "key", "value"), lambda site: {
            "scale": site.number("scale"), "causal": _flag(site, "is_causal", False)})),
    "softplus": Function(("input", "beta", "threshold"), _composite(
        composites.softplus, ("input",), lambda site: {
            "beta": float(site.number("beta", 1.0)), "threshold": float(site.number("threshold", 20.0))})),
    "softsign": Function(_U, _composite(composites.softsign, ("input",))),
    "elu": Function(("input", "alpha"), _composite(
        composites.elu, ("input",), lambda site: {"alpha": float(site.number("alpha", 1.0))})),
    "selu": Function(_U, _composite(composites.elu, ("input",), lambda site: {
        "alpha": 1.6732632423543772, "scale": 1.0507009873554805})),
    "hardtanh": Function(("input", "min_val", "max_val"), _composite(
        composites.hardtanh, ("input",), lambda site: {
            "low": float(site.number("min_val", -1.0)), "high": float(site.number("max_val", 1.0))})),
    "hardsigmoid": Function(_U, _composite(composites.hardsigmoid, ("input",))),
    "hardswish": Function(_U, _composite(composites.hardswish, ("input",))),
    "logsumexp": Function(_RED, _logsumexp),
    "mish": Function(_U, _composite(composites.mish, ("input",))),
    "relu6": Function(_U, _composite(lambda x: ops.make("clamp", [x], min=0.0, max=6.0), ("input",))),
    **{name: Function(("input", "dim", "unbiased", "keepdim", "correction"), _variance(name == "std"))
       for name in ("var", "std")},
    "to": Function(("input", "dtype"), _cast_to(None)),
    **{name: Function(_U, _cast_to(ALIASES[dt])) for name, dt in (
        ("float", "f32"), ("half", "f16"), ("bfloat16", "bf16"), ("double", "f64"),
        ("int", "i32"), ("long", "i64"), ("bool", "bool"))},
}
FUNCTIONS["clip"] = FUNCTIONS["clamp"]
FUNCTIONS["swish"] = FUNCTIONS["silu"]


def bind(name: str, fn: Function, positional: list[Arg], keywords: dict[str, tuple[Arg, int, int]],
         start: int, end: int) -> CallSite:
    """Bind a call's arguments to `fn`'s parameters as Python would, with PyTorch's names."""
    args: dict[str, Arg] = {}
    params = fn.params
    if fn.varargs and len(positional) > len(params):
        extra = positional[len(params) - 1:]
        packed = Arg(tuple(a.value for a in extra), extra[0].start, extra[-1].end)
        positional = positional[:len(params) - 1] + [packed]
    if len(positional) > len(params):
        bad = positional[len(params)]
        raise IntentError(f"{name} takes at most {len(params)} positional argument(s)", bad.start, bad.end)
    for param, arg in zip(params, positional):
        args[param] = arg
    for key, (arg, kstart, kend) in keywords.items():
        if key not in params:
            raise IntentError(f"{name} has no argument '{key}'" + did_you_mean(key, params[1:])
                              + f" ({name}'s arguments: {', '.join(params[1:]) or 'none'})", kstart, kend)
        if key in args:
            raise IntentError(f"{name} got '{key}' twice", kstart, kend)
        args[key] = arg
    if "input" in params and "input" not in args:
        raise IntentError(f"{name} needs a tensor argument", start, end)
    return CallSite(name, start, end, args)
