"""The reference evaluator agrees with PyTorch (CPU) for every operator of the IR."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from dice_engine.ir import ops, reference
from dice_engine.ir.dtypes import BF16, F16, F32, F64, I32, I64
from dice_engine.ir.graph import Program, TensorDecl

RNG = np.random.default_rng(1234)


def program(out, *inputs):
    decls = {n.name: TensorDecl(n.name, n.dtype, n.shape) for n in inputs}
    return Program(decls, "y", out)


def rand(shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape)


def check(prog, arrays, expected_torch, rtol=1e-12, atol=1e-12):
    got = reference.evaluate(prog, arrays)
    want = expected_torch.detach().numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


X = ops.input_tensor("x", F64, (6, 33))
Y = ops.input_tensor("b", F64, (33,))

UNARY_CASES = {
    "neg": (lambda t: -t, {}), "exp": (torch.exp, {}), "log": (torch.log, {}), "sqrt": (torch.sqrt, {}),
    "rsqrt": (torch.rsqrt, {}), "abs": (torch.abs, {}), "tanh": (torch.tanh, {}),
    "sigmoid": (torch.sigmoid, {}), "relu": (torch.relu, {}), "silu": (F.silu, {}),
    "gelu": (F.gelu, {}),
    "leaky_relu": (lambda t: F.leaky_relu(t, 0.2), {"negative_slope": 0.2}),
    "clamp": (lambda t: torch.clamp(t, -0.5, 0.75), {"min": -0.5, "max": 0.75}),
}


@pytest.mark.parametrize("op", sorted(UNARY_CASES))
def test_unary(op):
    fn, attrs = UNARY_CASES[op]
    positive = op in ("log", "sqrt", "rsqrt")
    x = rand((6, 33), 0.1 if positive else -2.0, 3.0)
    check(program(ops.make(op, [X], **attrs), X), {"x": x}, fn(torch.from_numpy(x)), rtol=1e-9)


def test_gelu_tanh():
    x = rand((6, 33))
    node = ops.make("gelu", [X], approximate="tanh")
    check(program(node, X), {"x": x}, F.gelu(torch.from_numpy(x), approximate="tanh"), rtol=1e-12)


BINARY_CASES = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "maximum": torch.maximum,
    "minimum": torch.minimum, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
    "eq": torch.eq, "ne": torch.ne, "pow": torch.pow,
}


@pytest.mark.parametrize("op", sorted(BINARY_CASES))
def test_binary_broadcast(op):
    x = rand((6, 33), 0.5, 2.0)
    b = rand((33,), 0.5, 2.0)
    if op in ("eq", "ne"):
        b[::3] = x[0, ::3]
    node = ops.make(op, [X, Y])
    check(program(node, X, Y), {"x": x, "b": b}, BINARY_CASES[op](torch.from_numpy(x), torch.from_numpy(b)))


def test_where_and_scalars():
    x, b = rand((6, 33)), rand((33,))
    node = ops.make("where", [ops.make("gt", [X, ops.const(0.0)]), ops.make("mul", [X, ops.const(2.5)]), Y])
    tx, tb = torch.from_numpy(x), torch.from_numpy(b)
    check(program(node, X, Y), {"x": x, "b": b}, torch.where(tx > 0, tx * 2.5, tb))


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod", "argmax", "argmin"])
@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (-1, False), (None, False)])
def test_reductions(op, dim, keepdim):
    x = rand((6, 33), 0.5, 1.5)
    node = ops.make(op, [X], dim=dim, keepdim=keepdim)
    t = torch.from_numpy(x)
    fn = getattr(torch, op)
    if dim is None:
        want = fn(t)
        if keepdim:
            want = want.reshape(1, 1)
    elif op in ("max", "min"):
        want = fn(t, dim=dim, keepdim=keepdim).values
    else:
        want = fn(t, dim=dim, keepdim=keepdim)
    check(program(node, X), {"x": x}, want, rtol=1e-12)


def test_argmax_ties_take_first_index():
    x = np.zeros((3, 8))
    x[:, 2] = x[:, 5] = 1.0
    x_decl = ops.input_tensor("x", F64, (3, 8))
    prog = program(ops.make("argmax", [x_decl], dim=1), x_decl)
    want = torch.argmax(torch.from_numpy(x), 1).tolist()
    assert reference.evaluate(prog, {"x": x}).tolist() == want == [2, 2, 2]


def test_integer_sum_is_int64():
    xi = ops.input_tensor("x", I32, (5, 7))
    node = ops.make("sum", [xi], dim=1)
    assert node.dtype == I64
    x = RNG.integers(-100, 100, size=(5, 7)).astype(np.int32)
    got = reference.evaluate(program(node, xi), {"x": x})
    assert got.dtype == np.int64 and got.tolist() == torch.from_numpy(x).sum(1).tolist()


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax(op, dim):
    x = rand((6, 33), -5, 5)
    check(program(ops.make(op, [X], dim=dim), X), {"x": x},
          getattr(torch, op)(torch.from_numpy(x), dim=dim), rtol=1e-12)


def test_layer_norm_and_rms_norm():
    x, w, b = rand((6, 33)), rand((33,)), rand((33,))
    W, B = ops.input_tensor("w", F64, (33,)), ops.input_tensor("b", F64, (33,))
    tx, tw, tb = (torch.from_numpy(a) for a in (x, w, b))
    ln = ops.make("layer_norm", [X, W, B], eps=1e-5)
    check(program(ln, X, W, B), {"x": x, "w": w, "b": b}, F.layer_norm(tx, (33,), tw, tb, 1e-5), rtol=1e-10)
    rms = ops.make("rms_norm", [X, W], eps=1e-6)
    check(program(rms, X, W), {"x": x, "w": w}, F.rms_norm(tx, (33,), tw, 1e-6), rtol=1e-10)


def test_rms_norm_default_eps_is_the_dtype_epsilon():
    x32 = ops.input_tensor("x", F32, (4, 16))
    x = rand((4, 16), -1e-4, 1e-4).astype(np.float32)   # small values make eps matter
    got = reference.evaluate(program(ops.make("rms_norm", [x32]), x32), {"x": x})
    want = F.rms_norm(torch.from_numpy(x).double(), (16,), eps=float(np.finfo(np.float32).eps))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dim", [0, 1])
def test_cumsum(dim):
    x = rand((6, 33))
    check(program(ops.make("cumsum", [X], dim=dim), X), {"x": x}, torch.cumsum(torch.from_numpy(x), dim))


def test_permute_and_transpose():
    x3 = ops.input_tensor("x", F64, (2, 3, 4))
    x = rand((2, 3, 4))
    check(program(ops.make("permute", [x3], dims=(2, 0, 1)), x3), {"x": x},
          torch.from_numpy(x).permute(2, 0, 1))
    check(program(ops.transpose(x3, 1, 2), x3), {"x": x}, torch.from_numpy(x).transpose(1, 2))


@pytest.mark.parametrize("shapes", [((5, 7), (7, 3)), ((2, 5, 7), (2, 7, 3)), ((2, 5, 7), (7, 3))])
def test_matmul(shapes):
    a_shape, b_shape = shapes
    A, B = ops.input_tensor("a", F64, a_shape), ops.input_tensor("b", F64, b_shape)
    a, b = rand(a_shape), rand(b_shape)
    check(program(ops.make("matmul", [A, B]), A, B), {"a": a, "b": b},
          torch.from_numpy(a) @ torch.from_numpy(b), rtol=1e-12)


def test_matmul_with_transposed_operand_and_epilogue():
    A, B, bias = (ops.input_tensor("a", F64, (5, 7)), ops.input_tensor("b", F64, (3, 7)),
                  ops.input_tensor("c", F64, (3,)))
    out = ops.make("gelu", [ops.make("add", [ops.make("matmul", [A, ops.transpose(B, 0, 1)]), bias])])
    a, b, c = rand((5, 7)), rand((3, 7)), rand((3,))
    check(program(out, A, B, bias), {"a": a, "b": b, "c": c},
          F.gelu(torch.from_numpy(a) @ torch.from_numpy(b).T + torch.from_numpy(c)), rtol=1e-10)


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2)])
def test_conv2d(stride, padding, dilation):
    Xc, Wc, Bc = (ops.input_tensor("x", F64, (2, 3, 9, 11)), ops.input_tensor("w", F64, (4, 3, 3, 3)),
                  ops.input_tensor("b", F64, (4,)))
    node = ops.make("conv2d", [Xc, Wc, Bc], stride=stride, padding=padding, dilation=dilation)
    x, w, b = rand((2, 3, 9, 11)), rand((4, 3, 3, 3)), rand((4,))
    want = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
                    stride=stride, padding=padding, dilation=dilation)
    assert node.shape == tuple(want.shape)
    check(program(node, Xc, Wc, Bc), {"x": x, "w": w, "b": b}, want, rtol=1e-10)


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("kernel,stride,padding", [(2, None, 0), (3, 2, 1), ((3, 2), (2, 1), (1, 0))])
def test_pooling(op, kernel, stride, padding):
    Xp = ops.input_tensor("x", F64, (2, 3, 9, 10))
    node = ops.make(op, [Xp], kernel_size=kernel, stride=stride, padding=padding)
    x = rand((2, 3, 9, 10))
    want = getattr(F, op)(torch.from_numpy(x), kernel, stride, padding)
    assert node.shape == tuple(want.shape)
    check(program(node, Xp), {"x": x}, want)


@pytest.mark.parametrize("dtype", [F32, F16, BF16])
def test_output_rounding_matches_torch_dtype(dtype):
    xd = ops.input_tensor("x", dtype, (64,))
    x = reference.round_to(rand((64,)), dtype)
    got = reference.evaluate(program(ops.make("exp", [xd]), xd), {"x": x})
    tdtype = getattr(torch, dtype.torch)
    want = torch.exp(torch.from_numpy(x.astype(np.float64))).to(tdtype).to(torch.float64).numpy()
    np.testing.assert_array_equal(got.astype(np.float64), want)


def test_bf16_storage_round_trip_matches_torch_bits():
    x = rand((1000,)).astype(np.float32)
    bits = reference.to_storage(x, BF16)
    want = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(bits, want)
    np.testing.assert_array_equal(reference.from_storage(bits, BF16),
                                  torch.from_numpy(x).to(torch.bfloat16).float().numpy())


def test_storage_of_other_dtypes():
    for dtype in (F32, F16, F64, I32):
        values = reference.round_to(rand((10,)) * 10, dtype)
        raw = reference.to_storage(values, dtype)
        np.testing.assert_array_equal(reference.from_storage(raw.view(np.uint8), dtype), values)


def test_symbol_binding_is_checked():
    xs = ops.input_tensor("x", F32, ("N", 4))
    ys = ops.input_tensor("y", F32, ("N", 4))
    prog = Program({"x": TensorDecl("x", F32, ("N", 4)), "y": TensorDecl("y", F32, ("N", 4))}, "z",
                   ops.make("add", [xs, ys]), symbols={"N": None})
    ok = reference.evaluate(prog, {"x": np.ones((3, 4), np.float32), "y": np.ones((3, 4), np.float32)})
    assert ok.shape == (3, 4) and ok.dtype == np.float32
    with pytest.raises(ValueError, match="symbol N"):
        reference.evaluate(prog, {"x": np.ones((3, 4), np.float32), "y": np.ones((5, 4), np.float32)})


def test_gather_index_select_and_embedding_match_torch():
    from dice_engine.intent import composites
    x = rand((5, 9, 4))
    idx = RNG.integers(0, 9, size=(5, 3, 4))
    xi, ii = ops.input_tensor("x", F64, (5, 9, 4)), ops.input_tensor("i", I64, (5, 3, 4))
    check(program(ops.make("gather", [xi, ii], dim=1), xi, ii), {"x": x, "i": idx},
          torch.gather(torch.from_numpy(x), 1, torch.from_numpy(idx)))
    # an index smaller than x along the other dims reads the leading part of them
    small = RNG.integers(0, 5, size=(2, 3, 4))
    si = ops.input_tensor("i", I64, (2, 3, 4))
    check(program(ops.make("gather", [xi, si], dim=0), xi, si), {"x": x, "i": small},
          torch.gather(torch.from_numpy(x), 0, torch.from_numpy(small)))
    picks = RNG.integers(0, 4, size=(6,))
    pi = ops.input_tensor("i", I64, (6,))
    check(program(composites.index_select(xi, -1, pi), xi, pi), {"x": x, "i": picks},
          torch.index_select(torch.from_numpy(x), -1, torch.from_numpy(picks)))
    table, ids = rand((11, 7)), RNG.integers(0, 11, size=(2, 3))
    ti, di = ops.input_tensor("t", F64, (11, 7)), ops.input_tensor("d", I64, (2, 3))
    check(program(composites.embedding(di, ti), ti, di), {"t": table, "d": ids},
          F.embedding(torch.from_numpy(ids), torch.from_numpy(table)))


def test_gather_rejects_what_torch_rejects():
    xi = ops.input_tensor("x", F64, (5, 9))
    with pytest.raises(ops.OpError, match="integer tensor"):
        ops.make("gather", [xi, ops.input_tensor("i", F32, (5, 2))], dim=1)
    with pytest.raises(ops.OpError, match="rank"):
        ops.make("gather", [xi, ops.input_tensor("i", I64, (5,))], dim=1)
    with pytest.raises(ops.OpError, match="larger than the input along dim 0"):
        ops.make("gather", [xi, ops.input_tensor("i", I64, (6, 2))], dim=1)
