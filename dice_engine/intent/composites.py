"""PyTorch functions written as primitive IR (normalisations, losses, distances, activations,
masks): each builder follows PyTorch's definition, so the float64 reference and the general
lowering agree with torch without an operator of their own. Errors are `OpError`s naming the
argument at fault, with the allowed range."""
from __future__ import annotations

import math

from ..ir import ops
from ..ir.graph import Node
from ..ir.statistics import standardize

OpError = ops.OpError


def m(op: str, *args: Node | float | int, **attrs) -> Node:
    """ops.make with Python numbers as scalar constants."""
    nodes = [a if isinstance(a, Node) else ops.const(a) for a in args]
    return ops.make(op, nodes, **attrs)


def matmul(a: Node, b: Node) -> Node:
    """`a @ b` with PyTorch's vector rules: a vector on the right is a column and on the left a
    row, whose dimension the result drops; two vectors give their dot product (0-d)."""
    if a.rank == 1 and b.rank == 1:
        if a.shape != b.shape:
            raise OpError(f"a dot product needs vectors of one length, got {a.shape[0]} and {b.shape[0]}", 1)
        return m("sum", m("mul", a, b))
    if b.rank == 1:
        y = m("matmul", a, m("reshape", b, shape=(b.shape[0], 1)))
        return m("reshape", y, shape=y.shape[:-1])
    if a.rank == 1:
        y = m("matmul", m("reshape", a, shape=(1, a.shape[0])), b)
        return m("reshape", y, shape=y.shape[:-2] + y.shape[-1:])
    return m("matmul", a, b)


def _channel_view(param: Node, x: Node, arg: int) -> Node:
    """A per-channel [C] parameter shaped to broadcast over an [N, C, ...] input."""
    if param.shape != (x.shape[1],):
        raise OpError(f"expected a parameter of shape [{x.shape[1]}], got {list(param.shape)}", arg)
    return m("reshape", param, shape=(x.shape[1],) + (1,) * (x.rank - 2))


def expand(x: Node, shape: tuple) -> Node:
    """`x` broadcast to `shape` (PyTorch's rules), as a select whose both branches are `x`."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    return m("where", m("ge", ops.index(shape, 0), 0), x, x)


def index_select(x: Node, dim: int, index: Node) -> Node:
    """torch.index_select: the slices of x along `dim` at a 1-D integer index, in its order."""
    dim = ops.normalize_dim(dim, x.rank, 0)
    if index.rank != 1:
        raise OpError(f"index_select's index must be 1-D, got rank {index.rank}", 1)
    count = index.shape[0]
    picks = m("reshape", index, shape=(1,) * dim + (count,) + (1,) * (x.rank - dim - 1))
    return m("gather", x, expand(picks, x.shape[:dim] + (count,) + x.shape[dim + 1:]), dim=dim)


def embedding(ids: Node, weight: Node) -> Node:
    """F.embedding: the rows of a [V, D] table at integer ids of any shape, [*ids.shape, D]
    (padding_idx changes only gradients)."""
    if weight.rank != 2:
        raise OpError(f"embedding's weight must be a [V, D] table, got rank {weight.rank}", 1)
    if not all(isinstance(d, int) for d in ids.shape):
        raise OpError("embedding needs concrete id shapes", 0)
    count = math.prod(ids.shape)
    width = weight.shape[1]
    rows = expand(m("reshape", ids, shape=(count, 1)), (count, width))
    return m("reshape", m("gather", weight, rows, dim=0), shape=tuple(ids.shape) + (width,))


def _affine(y: Node, x: Node, weight: Node | None, bias: Node | None) -> Node:
    if weight is not None:
        y = m("mul", y, _channel_view(weight, x, 1))
    if bias is not None:
        y = m("add", y, _channel_view(bias, x, 2))
    return y


def batch_norm(x: Node, weight: Node | None, bias: Node | None, eps: float) -> Node:
    """Training-mode batch norm: statistics over every dim but the channel (dim 1)."""
    if x.rank < 2:
        raise OpError(f"batch_norm needs an [N, C, ...] input (rank >= 2), got rank {x.rank}", 0)
    axes = (0,) + tuple(range(2, x.rank))
    return _affine(standardize(x, axes, eps), x, weight, bias)


def batch_norm_eval(x: Node, mean: Node, var: Node, weight: Node | None, bias: Node | None,
                    eps: float) -> Node:
    y = m("mul", m("sub", x, _channel_view(mean, x, 1)),
          m("rsqrt", m("add", _channel_view(var, x, 2), float(eps))))
    return _affine(y, x, weight, bias)


def instance_norm(x: Node, weight: Node | None, bias: Node | None, eps: float) -> Node:
    if x.rank < 3:
        raise OpError(f"instance_norm needs an [N, C, ...spatial] input (rank >= 3), got rank {x.rank}", 0)
    return _affine(standardize(x, tuple(range(2, x.rank)), eps), x, weight, bias)


def group_norm(x: Node, groups: int, weight: Node | None, bias: Node | None, eps: float) -> Node:
    if x.rank < 2:
        raise OpError(f"group_norm needs an [N, C, ...] input (rank >= 2), got rank {x.rank}", 0)
    channels = x.shape[1]
    if not isinstance(channels, int) or not any(isinstance(d, int) for d in x.shape):
        raise OpError("group_norm needs concrete channel and spatial sizes", 0)
    if not isinstance(groups, int) or groups < 1 or channels % groups:
        raise OpError(f"num_groups={groups} must divide the {channels} channels", None, "num_groups")
    grouped = m("reshape", x, shape=(x.shape[0], groups, -1))
    y = m("reshape", standardize(grouped, (2,), eps), shape=x.shape)
    return _affine(y, x, weight, bias)


def p_norm(x: Node, p: float | str, dims: tuple[int, ...] | None, keepdim: bool) -> Node:
    """torch.norm / linalg.vector_norm: 'fro' and 2 → sqrt(sum x²), 1 → sum |x|, inf → max |x|."""
    dims_attr = tuple(range(x.rank)) if dims is None else dims
    if p in ("fro", 2, 2.0):
        return m("sqrt", m("sum", m("mul", x, x), dim=dims_attr, keepdim=keepdim))
    if p in (1, 1.0):
        return m("sum", m("abs", x), dim=dims_attr, keepdim=keepdim)
    if p in ("inf", float("inf")):
        return m("max", m("abs", x), dim=dims_attr, keepdim=keepdim)
    if isinstance(p, (int, float)) and p > 0:
        total = m("sum", m("pow", m("abs", x), float(p)), dim=dims_attr, keepdim=keepdim)
        return m("pow", total, 1.0 / float(p))
    raise OpError(f"p must be 'fro', inf or a positive number, got {p!r}", None, "p")


def normalize(x: Node, p: float, dim: int, eps: float) -> Node:
    norm = p_norm(x, p, (ops.normalize_dim(dim, x.rank),), True)
    return m("div", x, m("maximum", norm, float(eps)))


def _reduce_loss(loss: Node, reduction: str, batch: int | str | None = None) -> Node:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return m("sum", loss)
    if reduction == "mean":
        return m("mean", loss)
    if reduction == "batchmean" and batch is not None:
        return m("div", m("sum", loss), float(batch) if isinstance(batch, int) else 1.0)
    allowed = "'none', 'mean', 'sum'" + (", 'batchmean'" if batch is not None else "")
    raise OpError(f"reduction must be one of {allowed}, got {reduction!r}", None, "reduction")


def _picked(logp: Node, target: Node) -> Node:
    """logp[n, target[n]] for an [N, C] input and an integer [N] target (a one-hot select)."""
    if logp.rank != 2:
        raise OpError(f"the input must be [N, C] (rank 2), got rank {logp.rank}", 0)
    if target.dtype.is_float or target.shape != (logp.shape[0],):
        raise OpError(f"target must be an integer tensor of shape [{logp.shape[0]}], "
                      f"got {target.dtype}{list(target.shape)}", 1)
    hit = m("eq", ops.index(logp.shape, 1), m("reshape", target, shape=(logp.shape[0], 1)))
    return m("sum", m("where", hit, logp, 0.0), dim=1)


def nll_loss(logp: Node, target: Node, reduction: str) -> Node:
    return _reduce_loss(m("neg", _picked(logp, target)), reduction)


def cross_entropy(x: Node, target: Node, reduction: str, label_smoothing: float = 0.0) -> Node:
    """With label smoothing e, a row's loss is (1 - e) times the picked class's -logp plus e times
    the mean of -logp over the classes (PyTorch's definition)."""
    if x.rank != 2:
        raise OpError(f"cross_entropy's input must be [N, C] (rank 2), got rank {x.rank}", 0)
    if not 0.0 <= label_smoothing <= 1.0:
        raise OpError(f"label_smoothing must be in [0, 1], got {label_smoothing}", None, "label_smoothing")
    logp = ops.make("log_softmax", [x], dim=1)
    if not label_smoothing:
        return nll_loss(logp, target, reduction)
    return _reduce_loss(label_smoothed(m("neg", _picked(logp, target)), logp, label_smoothing), reduction)


def label_smoothed(row_nll: Node, logp: Node, smoothing: float) -> Node:
    """Per-row cross entropy with label smoothing e from the rows' -logp of the target class and
    the [N, C] log-probabilities: (1 - e) * row_nll + e * mean over the classes of -logp."""
    uniform = m("div", m("neg", m("sum", logp, dim=1)), float(logp.shape[1]))
    return m("add", m("mul", row_nll, 1.0 - smoothing), m("mul", uniform, float(smoothing)))


def _same_shape(a: Node, b: Node, what: str) -> None:
    if a.shape != b.shape:
        raise OpError(f"{what}: shapes {list(a.shape)} and {list(b.shape)} differ", 1)


def kl_div(x: Node, target: Node, reduction: str, log_target: bool) -> Node:
    _same_shape(x, target, "kl_div")
    return _reduce_loss(kl_pointwise(x, target, log_target), reduction, x.shape[0] if x.rank else 1)


def kl_pointwise(x: Node, target: Node, log_target: bool) -> Node:
    """kl_div's elementwise loss, PyTorch's: exp(t) * (t - x) for a log target, else
    xlogy(t, t) - t * x (0 where t is 0, NaN where it is negative)."""
    if log_target:
        return m("mul", m("exp", target), m("sub", target, x))
    tlogt = m("where", m("eq", target, 0.0), 0.0, m("mul", target, m("log", target)))
    return m("sub", tlogt, m("mul", target, x))


def smooth_l1(x: Node, target: Node, reduction: str, beta: float, huber: bool) -> Node:
    _same_shape(x, target, "smooth_l1_loss")
    if beta < 0:
        name = "delta" if huber else "beta"
        raise OpError(f"{name} must be >= 0, got {beta}", None, name)
    diff = m("abs", m("sub", x, target))
    if beta == 0:
        return _reduce_loss(diff, reduction)
    quad = m("mul", m("mul", diff, diff), 0.5 if huber else 0.5 / beta)
    lin = m("mul", m("sub", diff, 0.5 * beta), beta) if huber else m("sub", diff, 0.5 * beta)
    return _reduce_loss(m("where", m("lt", diff, float(beta)), quad, lin), reduction)


def mse(x: Node, target: Node, reduction: str) -> Node:
    d = m("sub", x, target)
    return _reduce_loss(m("mul", d, d), reduction)


def cosine_similarity(a: Node, b: Node, dim: int, eps: float) -> Node:
    shape = ops.broadcast_shapes(a.shape, b.shape)
    if shape is None:
        raise OpError(f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast", 1)
    d = ops.normalize_dim(dim, len(shape), 0, "dim")
    dot = m("sum", m("mul", a, b), dim=d)
    na = m("sum", m("mul", a, a), dim=d)
    nb = m("sum", m("mul", b, b), dim=d)
    return m("div", dot, m("sqrt", m("maximum", m("mul", na, nb), float(eps) ** 2)))


def pairwise_distance(a: Node, b: Node, p: float, eps: float) -> Node:
    diff = m("add", m("sub", a, b), float(eps))
    return p_norm(diff, p, (max(a.rank, b.rank) - 1,), False)


def triplet_margin(anchor: Node, pos: Node, neg: Node, margin: float, p: float, eps: float,
                   reduction: str) -> Node:
    loss = m("relu", m("add", m("sub", pairwise_distance(anchor, pos, p, eps),
                                  pairwise_distance(anchor, neg, p, eps)), float(margin)))
    return _reduce_loss(loss, reduction)


def triangle(x: Node, diagonal: int, upper: bool) -> Node:
    if x.rank < 2:
        raise OpError(f"{'triu' if upper else 'tril'} needs a matrix (rank >= 2), got rank {x.rank}", 0)
    offset = m("sub", ops.index(x.shape, -1), ops.index(x.shape, -2))
    keep = m("ge" if upper else "le", offset, int(diagonal))
    return m("where", keep, x, 0)


def diag(v: Node, diagonal: int) -> Node:
    """torch.diag: of a vector, the square matrix with `v` on its main diagonal; of a matrix, the
    vector of its `diagonal`-th diagonal (above the main one when positive, below when negative)."""
    if v.rank == 2:
        return _diagonal(v, diagonal)
    if v.rank != 1:
        raise OpError(f"diag needs a vector or a matrix (rank 1 or 2), got shape {list(v.shape)}", 0)
    if diagonal != 0:
        raise OpError(f"diag supports diagonal=0 only, got {diagonal}", None, "diagonal")
    shape = (v.shape[0], v.shape[0])
    on = m("eq", ops.index(shape, 0), ops.index(shape, 1))
    return m("where", on, m("reshape", v, shape=(v.shape[0], 1)), 0)


def _diagonal(a: Node, offset: int) -> Node:
    """A matrix's diagonal as a strided slice of its flat view: element i is a[i, i + offset]
    (a[i - offset, i] below the main diagonal), every (columns + 1)-th element."""
    rows, cols = a.shape
    if not isinstance(rows, int) or not isinstance(cols, int):
        raise OpError(f"diag of a matrix needs concrete sizes, got shape {list(a.shape)}", 0)
    length = min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols)
    if length <= 0:
        raise OpError(f"diagonal {offset} of a {rows}x{cols} matrix is empty "
                      f"(it must lie in [{1 - rows}, {cols - 1}])", None, "diagonal")
    start = offset if offset >= 0 else -offset * cols
    flat = m("reshape", a, shape=(rows * cols,))
    end = start + (length - 1) * (cols + 1) + 1
    return ops.make("slice", [flat], dim=0, start=start, end=end, step=cols + 1)


def softplus(x: Node, beta: float, threshold: float) -> Node:
    """log(1 + exp(beta x)) / beta, x itself past the threshold; beta = 1 needs no scaling."""
    bx = x if beta == 1 else m("mul", x, float(beta))
    soft = m("log", m("add", m("exp", bx), 1.0))
    if beta != 1:
        soft = m("div", soft, float(beta))
    return m("where", m("gt", bx, float(threshold)), x, soft)


def elu(x: Node, alpha: float, scale: float = 1.0) -> Node:
    neg = m("mul", m("sub", m("exp", x), 1.0), float(alpha))
    return m("mul", m("where", m("gt", x, 0.0), x, neg), float(scale))


def hardtanh(x: Node, low: float, high: float) -> Node:
    if low > high:
        raise OpError(f"min_val {low} must not exceed max_val {high}", None, "min_val")
    return ops.make("clamp", [x], min=low, max=high)


def hardsigmoid(x: Node) -> Node:
    """relu6(x + 3) / 6, in PyTorch's order of operations (x / 6 + 0.5 rounds differently)."""
    return m("div", ops.make("clamp", [m("add", x, 3.0)], min=0.0, max=6.0), 6.0)


def mish(x: Node) -> Node:
    return m("mul", x, m("tanh", softplus(x, 1.0, 20.0)))


def hardswish(x: Node) -> Node:
    return m("mul", x, hardsigmoid(x))


def variance(x: Node, dim: int | tuple[int, ...] | None, correction: float, keepdim: bool,
             root: bool = False) -> Node:
    """var (std with `root`) as PyTorch defines it: the summed squared deviation from the mean
    over `dim` (every axis for None), divided by N - correction (two kernels: mean, then sum)."""
    mean = m("mean", x, dim=dim, keepdim=True)
    dev = m("sub", x, mean)
    total = m("sum", m("mul", dev, dev), dim=dim, keepdim=keepdim)
    dims = range(x.rank) if dim is None else (dim if isinstance(dim, tuple) else (dim,))
    count = math.prod(int(x.shape[d]) for d in dims)
    out = m("div", total, float(max(count - correction, 0)))
    return m("sqrt", out) if root else out


def logsumexp(x: Node, dim: int | tuple[int, ...], keepdim: bool) -> Node:
    """log(sum(exp(x))) over `dim`, shifted by the max so that exp never overflows."""
    dims = tuple(ops.normalize_dim(int(d), x.rank) for d in (dim if isinstance(dim, tuple) else (dim,)))
    top = m("max", x, dim=dims, keepdim=True)
    out = m("add", m("log", m("sum", m("exp", m("sub", x, top)), dim=dims, keepdim=True)), top)
    kept = tuple(s for i, s in enumerate(x.shape) if i not in dims)
    return out if keepdim else m("reshape", out, shape=kept)


def softsign(x: Node) -> Node:
    return m("div", x, m("add", m("abs", x), 1.0))


def attention(q: Node, k: Node, v: Node, scale: float | None, causal: bool) -> Node:
    """scaled_dot_product_attention: softmax(q kᵀ · scale [+ causal mask]) v."""
    if q.rank < 2 or k.rank != q.rank or v.rank != q.rank:
        raise OpError("query, key and value must have one rank >= 2", 1)
    d = q.shape[-1]
    if not isinstance(d, int):
        raise OpError("the head dimension must be concrete", 0)
    s = float(scale) if scale is not None else 1.0 / float(d) ** 0.5
    scores = m("mul", ops.make("matmul", [q, ops.transpose(k, -2, -1)]), s)
    if causal:
        keep = m("le", ops.index(scores.shape, -1), ops.index(scores.shape, -2))
        scores = m("where", keep, scores, float("-inf"))
    return ops.make("matmul", [ops.make("softmax", [scores], dim=-1), v])
