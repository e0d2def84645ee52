"""tests/data/intent_suite.txt: every line parses, and together they cover every family and dtype."""
from __future__ import annotations

from pathlib import Path

import pytest

from dice_engine.intent import parse_intent
from dice_engine.intent.parse import is_tensor_form
from dice_engine.ir.patterns import classify

SUITE = Path(__file__).resolve().parents[1] / "data" / "intent_suite.txt"
LINES = [line for line in SUITE.read_text(encoding="utf-8").splitlines()
         if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("line", LINES)
def test_suite_line_parses_to_one_kernel(line):
    classify(parse_intent(line, default_shape=(1024, 1024)))


def test_suite_coverage():
    assert len(LINES) >= 45
    problems = [classify(parse_intent(line, default_shape=(1024, 1024))) for line in LINES]
    patterns = {p.pattern for p in problems}
    assert patterns == {"elementwise", "reduction", "softmax", "norm", "scan", "transpose", "gemm",
                        "conv2d", "pool"}
    dtypes = {d.dtype.name for p in problems for d in p.program.inputs.values()}
    assert {"f32", "f16", "bf16", "f64", "i32"} <= dtypes
    ops = {n.op for p in problems for n in p.program.output.walk()}
    assert {"exp", "log", "sqrt", "rsqrt", "abs", "tanh", "sigmoid", "relu", "gelu", "silu", "leaky_relu",
            "clamp", "where", "pow", "maximum", "minimum", "sum", "mean", "max", "min", "prod", "argmax",
            "argmin", "softmax", "log_softmax", "layer_norm", "rms_norm", "cumsum", "permute", "matmul",
            "conv2d", "max_pool2d", "avg_pool2d"} <= ops
    words = [line for line in LINES if not is_tensor_form(line)]
    assert len(words) >= 10
    assert any(p.program.symbols for p in problems)
