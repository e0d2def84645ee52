"""Operations DICE has no kernel family for, by the names and words people use for them, so that
an intent asking for one is told "not supported yet" (and what is) instead of "unknown function"
or "could not tell which operation"."""
from __future__ import annotations

import re

from .functions import FUNCTIONS
from .lexicon import w

CAN_GENERATE = ("elementwise maps, sum/mean/max/min/prod/argmax/argmin over any axes, softmax/log_softmax, "
                "layer/rms/batch/instance/group norm, cumsum/cumprod, transpose/permute/flip/reshape, "
                "gather/index_select/embedding lookups, "
                "matmul/bmm (with bias and activation), 1-3-D and transposed convolutions, 1-3-D max/avg "
                "pooling, losses (cross_entropy, nll_loss, mse_loss, ...), scaled_dot_product_attention")

# (what it is, tensor-form function names, words in English and Chinese)
_OPERATIONS: list[tuple[str, frozenset[str], str]] = [
    ("top-k selection", frozenset({"topk", "kthvalue"}),
     w(r"top[ -]?k|k[ -]?largest") + r"|前\s*k\s*(?:个|大)"),
    ("attention", frozenset({"scaled_dot_product_attention", "attention", "flash_attention",
                             "multi_head_attention"}),
     w(r"(?:fused |flash |multi[ -]?head |self[ -]|cross[ -])?attention(?! (?:scores|logits|weights))|sdpa")
     + r"|注意力"),
    ("sorting", frozenset({"sort", "argsort", "msort"}), w(r"sort|sorting|sorted|argsort") + r"|排序"),
    ("median/quantile", frozenset({"median", "nanmedian", "quantile", "mode"}),
     w(r"median|quantile|percentile") + r"|中位数|分位数"),
    ("histograms", frozenset({"histc", "histogram", "bincount"}), w(r"histogram|bincount") + r"|直方图"),
    ("scatter", frozenset({"scatter", "scatter_add", "scatter_reduce", "index_add", "index_put", "take"}),
     w(r"scatter|index[ _]add") + r"|散射"),
    ("FFTs", frozenset({"fft", "ifft", "rfft", "irfft", "fft2"}), w(r"fft|fourier transform") + r"|傅里叶"),
    ("mean squared error", frozenset({"mse_loss"}),
     w(r"mse(?: loss)?|mean[ -]squared? error") + r"|均方误差"),
    ("L1 loss", frozenset({"l1_loss"}), w(r"l1 loss|mean absolute error|mae") + r"|平均绝对误差"),
    ("losses", frozenset({"cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy"}),
     w(r"cross[ -]entropy|nll loss") + r"|交叉熵|损失函数"),
    ("dropout", frozenset({"dropout"}), w(r"dropout")),
    ("1-d/3-d and transposed convolutions", frozenset({"conv1d", "conv3d", "conv_transpose1d",
                                                       "conv_transpose2d", "conv_transpose3d"}),
     w(r"conv1d|conv3d|conv_transpose[123]d|[13]d convolution|transposed convolution|deconvolution")
     + r"|一维卷积|三维卷积|转置卷积|反卷积"),
    ("einsum", frozenset({"einsum"}), w(r"einsum")),
]


def _message(what: str) -> str:
    return f"{what} is not supported yet (DICE has no kernel family for it); DICE generates {CAN_GENERATE}"


def _words_message(what: str, names: frozenset[str]) -> str:
    """Words for an operation the tensor form serves but the words parser does not read."""
    served = sorted(n for n in names if n in FUNCTIONS)
    if not served:
        return _message(what)
    return (f"{what} is not understood in words yet; write it in the tensor form, e.g. "
            f"y = {served[0]}(...); with the tensors declared")


def unsupported_function(name: str) -> str | None:
    """The message for a tensor-form call of an operation DICE cannot generate, else None."""
    if name in FUNCTIONS:
        return None
    for what, names, _ in _OPERATIONS:
        if name.lower() in names:
            return _message(f"{name} ({what})") + f"; with a model configured, write torch.{name}(...)"
    return None


def unsupported_words(text: str) -> tuple[str, int, int] | None:
    """(message, start, end) for the first words naming an operation DICE cannot generate."""
    lowered = text.lower()
    found = [(m.start(), m.end(), what, names) for what, names, pattern in _OPERATIONS
             if (m := re.search(pattern, lowered))]
    if not found:
        return None
    start, end, what, names = min(found, key=lambda f: f[:2])
    return _words_message(f"'{text[start:end]}' ({what})", names), start, end
