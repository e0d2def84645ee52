"""Intents that call any torch function: parsing, PyTorch's shapes and dtypes, the reference, and
the whitelist that keeps a file's text from running anything but pure tensor functions."""
from __future__ import annotations

import numpy as np
import pytest

from dice_engine.intent import IntentError, parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.ir.reference import evaluate


def test_topk_values_has_pytorch_shape_dtype_and_reference():
    program = parse_intent("y = torch.topk(x, 8, dim=1).values; x: f32[64, 128]")
    assert program.output.op == "torch"
    assert (program.output.dtype.name, program.output.shape) == ("f32", (64, 8))
    assert classify(program).pattern == "torch"
    x = np.random.default_rng(0).standard_normal((64, 128)).astype(np.float32)
    expected = -np.sort(-x, axis=1)[:, :8]
    np.testing.assert_allclose(evaluate(program, {"x": x}), expected, rtol=1e-6)


def test_indices_are_int64_and_intermediates_feed_the_expression():
    program = parse_intent("h = x * 2; y = torch.argsort(h, dim=1, descending=True); x: f32[4, 16]")
    assert (program.output.dtype.name, program.output.shape) == ("i64", (4, 16))
    x = np.random.default_rng(1).permutation(64).reshape(4, 16).astype(np.float32)
    np.testing.assert_array_equal(evaluate(program, {"x": x}), np.argsort(-x, axis=1))


def test_functional_namespace_and_bound_symbols():
    program = parse_intent("y = F.unfold(x, kernel_size=2); x: f32[N, 3, 8, 8]; N=2")
    assert program.output.shape == (2, 12, 49)


@pytest.mark.parametrize("text,message", [
    ("y = torch.load(x); x: f32[4]", "'.load' is not allowed"),
    ("y = x.__class__(x); x: f32[4]", "not allowed"),
    ("y = torch.utils.data.foo(x); x: f32[4]", "only functions of"),
    ("y = torch.topk(x, 2).values; x: f32[N]", "symbolic size"),
    ("y = torch.topk(z, 2).values; x: f32[4]", "unknown name 'z'"),
    ("y = x.frobnicate(1); x: f32[4]", "PyTorch"),
    ("y = torch.topk(x, 9).values; x: f32[4]", "PyTorch"),
    ("y = torch.topk(x, 2); x: f32[4]", "not a tensor"),
    ("y = topk(x, 2); x: f32[4]", "torch.topk(...)"),
    ("y = torch.roll(x, 1) + 10 ** 10 ** 10; x: f32[4]", "constant exponent"),
    ("y = torch.roll(x, 1) * ('a' * 1000000000); x: f32[4]", "lists or strings"),
    ("y = torch.nonzero(x); x: f32[4]", "PyTorch"),
    ("y = x + torch.ones(65536, 65536, 2); x: f32[1]", "elements"),    # never allocated
    ("y = x + torch.ones(4, device='cuda'); x: f32[4]", "'device=' is not allowed"),
    ("y = torch.flip(x, **x); x: f32[4]", "expected an expression"),
])
def test_refused_expressions_are_intent_errors(text, message):
    with pytest.raises(IntentError) as info:
        parse_intent(text)
    assert message in info.value.message


def test_a_torch_expression_is_checked_only_at_the_sizes_it_was_inferred_for():
    from dice_engine.runner.inputs import shapes_to_check

    program = parse_intent("y = torch.topk(x, 4, dim=1).values; x: f32[N, 512]; N=256")
    assert program.output.shape == (256, 4)
    assert shapes_to_check(program) == [{"N": 256}]


@pytest.mark.parametrize("text, expected", [
    ("r = max(x, dim=-1, keepdim=True).values - min(x, dim=-1, keepdim=True).values",
     lambda x: x.max(-1, keepdim=True).values - x.min(-1, keepdim=True).values),
    ("r = torch.max(x, 1).indices", lambda x: x.max(1).indices),
    ("r = x.min(0, keepdim=True).indices", lambda x: x.min(0, keepdim=True).indices),
    ("r = x.max(dim=1).values * 2", lambda x: x.max(1).values * 2),
])
def test_the_values_and_indices_of_max_and_min_are_reductions_not_torch_calls(text, expected):
    import torch
    program = parse_intent(f"{text}; x: f32[64, 32]")
    assert not any(n.op == "torch" for n in program.output.walk())
    x = np.random.default_rng(2).permutation(64 * 32).reshape(64, 32).astype(np.float64)
    np.testing.assert_array_equal(evaluate(program, {"x": x}), expected(torch.from_numpy(x)).numpy())


@pytest.mark.parametrize("text, message", [
    ("r = max(x).values", "needs max(x, dim=...)"),
    ("r = torch.min(x, x).indices", "elementwise minimum"),
])
def test_values_of_a_max_that_returns_one_tensor_is_an_intent_error(text, message):
    with pytest.raises(IntentError) as info:
        parse_intent(f"{text}; x: f32[64, 32]")
    assert message in info.value.message


@pytest.mark.parametrize("text, expected", [
    ("d = diag(A @ B); A: f32[64, 48]; B: f32[48, 64]", lambda a, b: torch_diag(a @ b)),
    ("d = diag(A, 3); A: f32[5, 9]", lambda a: torch_diag(a, 3)),
    ("d = diag(A, diagonal=-2); A: f32[7, 4]", lambda a: torch_diag(a, -2)),
    ("d = diag(v) * 2; v: f32[6]", lambda v: torch_diag(v) * 2),
])
def test_diag_of_a_matrix_is_its_diagonal_and_of_a_vector_a_diagonal_matrix(text, expected):
    import torch
    program = parse_intent(text)
    rng = np.random.default_rng(3)
    values = {name: rng.standard_normal(decl.shape) for name, decl in program.inputs.items()}
    want = expected(*(torch.from_numpy(v) for v in values.values())).numpy()
    np.testing.assert_allclose(evaluate(program, values), want, rtol=1e-6)   # the output rounds to f32


def torch_diag(x, diagonal=0):
    import torch
    return torch.diag(x, diagonal)


def test_an_empty_diagonal_is_refused_with_its_range():
    with pytest.raises(IntentError) as info:
        parse_intent("d = diag(A, 9); A: f32[5, 9]")
    assert "[-4, 8]" in info.value.message


def test_kl_div_is_xlogy_like_pytorch_for_zero_and_negative_targets():
    import warnings

    import torch
    import torch.nn.functional as F
    program = parse_intent("loss = kl_div(logp, q, reduction='none'); logp, q: f32[3, 4]")
    logp = np.random.default_rng(4).standard_normal((3, 4))
    q = np.array([[0.0, 0.5, -0.25, 1.0]] * 3)          # a zero target adds 0; a negative one is NaN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # the reference takes the log of the negative too
        got = evaluate(program, {"logp": logp, "q": q})
    want = F.kl_div(torch.from_numpy(logp), torch.from_numpy(q), reduction="none").numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
