"""The torch reference (what the runner child evaluates on the GPU) computes the same function as
the numpy float64 evaluator, for every operator of the IR, on the runner's random inputs. Run on
CPU torch here (no GPU in CI); on a GPU only the device differs."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
import torch

from dice_engine.intent import parse_intent
from dice_engine.ir import ops, reference
from dice_engine.ir.dtypes import BF16, BOOL, F16, F32, I32, I64, U8
from dice_engine.ir.graph import Node, Program, TensorDecl
from dice_engine.runner import device_reference
from dice_engine.runner.device_inputs import draw_tensors, trial_generator
from dice_engine.runner.inputs import draw_inputs

x32 = ops.input_tensor("x", F32, (7, 37))
b32 = ops.input_tensor("b", F32, (37,))
xi = ops.input_tensor("i", I32, (7, 37))
ji = ops.input_tensor("j", I32, (7, 37))
flag = ops.input_tensor("m", BOOL, (7, 37))
xb = ops.input_tensor("x", BF16, (7, 37))
xh = ops.input_tensor("x", F16, (7, 37))
bytes_ = ops.input_tensor("u", U8, (7, 37))
img = ops.input_tensor("x", F32, (2, 3, 11, 13))
filt = ops.input_tensor("w", F32, (4, 3, 3, 3))
bias = ops.input_tensor("c", F32, (4,))
a3 = ops.input_tensor("a", BF16, (3, 9, 21))
b3 = ops.input_tensor("b", BF16, (3, 21, 5))
k = ops.const


def m(op: str, *args: Node, **attrs) -> Node:
    return ops.make(op, list(args), **attrs)


CASES: dict[str, Callable[[], Node]] = {
    **{f"{op}_f32": (lambda op=op: m(op, x32)) for op in sorted(ops.UNARY_FLOAT | {"neg", "abs", "relu"})},
    "gelu_tanh": lambda: m("gelu", x32, approximate="tanh"),
    "leaky_relu": lambda: m("leaky_relu", x32, negative_slope=0.2),
    "clamp": lambda: m("clamp", x32, min=-0.5, max=0.25),
    "relu_i32": lambda: m("relu", xi),
    "neg_abs_i32": lambda: m("abs", m("neg", xi)),
    "clamp_i32_float_bounds": lambda: m("clamp", xi, min=-2.5, max=3),
    "leaky_relu_i32": lambda: m("leaky_relu", xi, negative_slope=0.5),
    "cast_f16": lambda: m("cast", m("mul", x32, k(3.3)), dtype=F16),
    "cast_bf16_then_f32": lambda: m("add", m("cast", m("exp", x32), dtype=BF16), b32),
    "cast_i32": lambda: m("cast", m("mul", x32, k(7.0)), dtype=I32),
    "cast_bool": lambda: m("cast", xi, dtype=BOOL),
    "logical_not": lambda: m("logical_not", flag),
    **{f"{op}_f32": (lambda op=op: m(op, x32, b32)) for op in sorted(ops.ARITH - {"pow"})},
    "pow_f32": lambda: m("pow", m("abs", x32), k(1.7)),
    "div_i32": lambda: m("div", xi, ji),
    "arith_i32": lambda: m("sub", m("mul", xi, ji), m("add", ji, k(3))),
    "int_plus_float_const": lambda: m("add", xi, k(0.5)),
    **{f"{op}_f32": (lambda op=op: m(op, x32, b32)) for op in sorted(ops.COMPARE)},
    "compare_i32": lambda: m("le", xi, ji),
    **{op: (lambda op=op: m(op, flag, m("gt", x32, k(0.0)))) for op in sorted(ops.LOGICAL)},
    "where": lambda: m("where", m("gt", x32, k(0.0)), x32, m("mul", b32, k(2.0))),
    "bf16_mixed": lambda: m("add", m("mul", xb, k(2.5)), b32),
    "f16_sigmoid": lambda: m("sigmoid", xh),
    "u8_sum": lambda: m("sum", bytes_, dim=1),
    **{f"{op}_rows": (lambda op=op: m(op, x32, dim=1)) for op in ("sum", "mean", "max", "min", "prod")},
    **{f"{op}_all_keep": (lambda op=op: m(op, x32, dim=(0, 1), keepdim=True))
       for op in ("sum", "mean", "max", "min")},
    "prod_i32_cols": lambda: m("prod", xi, dim=0),
    "sum_bool": lambda: m("sum", flag, dim=0),
    "argmax_rows": lambda: m("argmax", x32, dim=1),
    "argmin_cols_keep": lambda: m("argmin", x32, dim=0, keepdim=True),
    "argmax_flat": lambda: m("argmax", x32),
    "argmin_i32": lambda: m("argmin", xi, dim=1),
    "softmax_rows": lambda: m("softmax", x32, dim=1),
    "softmax_cols_bf16": lambda: m("softmax", xb, dim=0),
    "log_softmax": lambda: m("log_softmax", x32, dim=1),
    "layer_norm": lambda: m("layer_norm", x32, b32, m("mul", b32, k(0.5)), eps=1e-5),
    "moments_nonadjacent": lambda: m("moments", m("add", img, k(3.0)), dim=(0, 2, 3)),
    "layer_norm_bf16": lambda: m("layer_norm", xb),
    "layer_norm_two_axes": lambda: m("layer_norm", ops.input_tensor("x", F32, (3, 4, 6)),
                                     ops.input_tensor("w", F32, (4, 6)), ops.input_tensor("c", F32, (4, 6)),
                                     normalized_shape=(4, 6)),
    "rms_norm_weight": lambda: m("rms_norm", x32, b32),
    "rms_norm_f16_default_eps": lambda: m("rms_norm", xh),
    "cumsum_f32": lambda: m("cumsum", x32, dim=1),
    "cumsum_i32": lambda: m("cumsum", xi, dim=0),
    "permute": lambda: m("permute", m("exp", x32), dims=(1, 0)),
    "matmul": lambda: m("matmul", x32, m("permute", x32, dims=(1, 0))),
    "matmul_batched_bf16": lambda: m("matmul", a3, b3),
    "conv2d": lambda: m("conv2d", img, filt, bias, stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
    "max_pool2d": lambda: m("max_pool2d", img, kernel_size=3, stride=2, padding=1),
    "avg_pool2d": lambda: m("avg_pool2d", img, kernel_size=(2, 3), padding=(1, 1)),
    "conv1d_groups": lambda: m("conv1d", ops.input_tensor("x", F32, (2, 4, 9)),
                               ops.input_tensor("w", F32, (6, 2, 3)), stride=2, padding=1, groups=2),
    "conv_transpose1d": lambda: m("conv_transpose1d", ops.input_tensor("x", F32, (2, 4, 9)),
                                  ops.input_tensor("w", F32, (4, 3, 3)), stride=3, dilation=2),
    "conv_transpose3d": lambda: m("conv_transpose3d", ops.input_tensor("x", F32, (1, 2, 3, 4, 4)),
                                  ops.input_tensor("w", F32, (2, 2, 2, 3, 2)), stride=(1, 2, 2), padding=1),
    "avg_pool1d": lambda: m("avg_pool1d", ops.input_tensor("x", F32, (2, 3, 11)), kernel_size=4, stride=3,
                            padding=2),
    "max_pool3d": lambda: m("max_pool3d", ops.input_tensor("x", F32, (1, 2, 4, 5, 5)), kernel_size=(2, 3, 3),
                            stride=2, padding=1),
    "conv3d": lambda: m("conv3d", ops.input_tensor("x", F32, (1, 2, 4, 5, 5)),
                        ops.input_tensor("w", F32, (3, 2, 2, 2, 2)), dilation=(1, 2, 1)),
    "conv_transpose2d": lambda: m("conv_transpose2d", ops.input_tensor("x", F32, (2, 4, 5, 5)),
                                  ops.input_tensor("w", F32, (4, 3, 3, 3)), ops.input_tensor("c", F32, (6,)),
                                  stride=2, padding=1, output_padding=1, groups=2),
    "max_pool1d_dilated_ceil": lambda: m("max_pool1d", ops.input_tensor("x", F32, (2, 3, 11)),
                                         kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True),
    "avg_pool3d_exclude_pad": lambda: m("avg_pool3d", ops.input_tensor("x", F32, (1, 2, 4, 5, 5)),
                                        kernel_size=2, stride=2, padding=1, ceil_mode=True,
                                        count_include_pad=False),
    "cumprod": lambda: m("cumprod", m("add", m("mul", x32, k(0.1)), k(1.0)), dim=1),
    "flip_reshape": lambda: m("reshape", m("flip", x32, dims=(0,)), shape=(37, 7)),
    **{f"{op}_f32": (lambda op=op: m(op, m("mul", x32, k(2.5)))) for op in sorted(ops.ROUNDING)},
    "floor_i32": lambda: m("floor", xi),
    "slice_step": lambda: m("slice", m("exp", x32), dim=1, start=2, end=-3, step=3),
    "slice_rows_negative": lambda: m("slice", x32, dim=0, start=-4),
    **{f"pad_{mode}": (lambda mode=mode: m("pad", x32, pads=((2, 1), (0, 4)), mode=mode))
       for mode in ("reflect", "replicate", "circular")},
    "pad_constant": lambda: m("pad", m("sigmoid", x32), pads=((1, 0), (3, 2)), value=-1.5),
    "gather_rows": lambda: m("gather", m("exp", x32), ops.input_tensor("g", I64, (7, 5)), dim=1),
    "gather_leading_part": lambda: m("gather", x32, ops.input_tensor("g", I64, (3, 37)), dim=0),
    "index_mask": lambda: m("where", m("ge", ops.index((7, 37), 1), ops.index((7, 37), 0)), x32, k(0.0)),
    "torch_topk": lambda: ops.torch_call("torch.topk(x, 3, dim=1).values * s", ["x", "s"],
                                         [x32, m("sum", x32, dim=1, keepdim=True)]),
}


def _program(out: Node) -> Program:
    decls = {n.name: TensorDecl(n.name, n.dtype, n.shape) for n in out.walk() if n.op == "input"}
    return Program(decls, "y", out)


def _torch_inputs(program: Program, arrays: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    dtypes = {n: device_reference.torch_dtype(d.dtype) for n, d in program.inputs.items()}
    return {n: torch.from_numpy(np.ascontiguousarray(a)).to(dtypes[n]) for n, a in arrays.items()}


def _agree(program: Program, got: torch.Tensor, want: np.ndarray, limit: float) -> None:
    assert tuple(got.shape) == want.shape
    dtype = program.output.dtype
    if not dtype.is_float:
        np.testing.assert_array_equal(got.numpy(), want.astype(got.numpy().dtype))
        return
    got64, want64 = got.to(torch.float64).numpy(), want.astype(np.float64)
    scale = np.abs(want64) + np.sqrt(np.mean(np.square(want64))) * 1e-3 + 1e-300
    assert (np.abs(got64 - want64) / scale).max() <= limit


def test_every_operator_of_the_ir_is_covered():
    used = {n.op for make in CASES.values() for n in make().walk()}
    assert ops.OPS <= used, sorted(ops.OPS - used)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1])
def test_the_wide_torch_reference_is_the_numpy_reference(name, seed):
    program = _program(CASES[name]())
    arrays = draw_inputs(program, {}, np.random.default_rng(seed))
    want = reference.evaluate(program, arrays)
    got = device_reference.evaluate(program, _torch_inputs(program, arrays), wide=True)
    assert got.dtype == device_reference.torch_dtype(program.output.dtype)
    # both in float64, rounded once: equal up to one rounding of the output dtype at most
    ulp = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23}.get(program.output.dtype.name, 1e-12)
    _agree(program, got, want, ulp)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_narrow_torch_reference_stays_within_float32_error(name):
    program = _program(CASES[name]())
    arrays = draw_inputs(program, {}, np.random.default_rng(5))
    want = reference.evaluate(program, arrays)
    got = device_reference.evaluate(program, _torch_inputs(program, arrays), wide=False)
    if program.output.op in ("argmax", "argmin"):
        return   # float32 values can reorder near-ties; the runner accepts any index of an equal value
    ulp = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7}.get(program.output.dtype.name, 1e-5)
    _agree(program, got, want, ulp)


def test_narrow_gemm_chunks_rows_and_accumulates_in_float64(monkeypatch):
    monkeypatch.setattr(device_reference, "NARROW_CHUNK_ELEMENTS", 37 * 3)   # 3 rows per chunk
    program = _program(CASES["matmul"]())
    arrays = draw_inputs(program, {}, np.random.default_rng(2))
    got = device_reference.evaluate(program, _torch_inputs(program, arrays), wide=False)
    _agree(program, got, reference.evaluate(program, arrays), 2.0 ** -23)


def test_a_symbolic_intent_evaluates_at_its_bindings():
    program = parse_intent("y = softmax(x, dim=1) * 2.0; x: f32[N, 64]")
    tensors = draw_tensors(program, {"N": 5}, trial_generator("cpu", 3, 0, 0), "cpu")
    arrays = {n: t.numpy() for n, t in tensors.items()}
    got = device_reference.evaluate(program, tensors)
    _agree(program, got, reference.evaluate(program, arrays, {"N": 5}), 2.0 ** -23)


def test_the_wide_bound_counts_every_value_in_float64():
    program = parse_intent("y = relu(x) * 2.0; x: f32[N, 64]")
    # x, relu(x), the constant, the product: 8 bytes per element
    assert device_reference.wide_bytes(program, {"N": 10}) == 8 * (640 + 640 + 1 + 640)


def test_device_draws_keep_the_runner_distributions():
    program = parse_intent("y = log(a) + b; a: f32[4096]; b: f32[4096]")
    first = draw_tensors(program, {}, trial_generator("cpu", 9, 0, 1), "cpu")
    again = draw_tensors(program, {}, trial_generator("cpu", 9, 0, 1), "cpu")
    other = draw_tensors(program, {}, trial_generator("cpu", 9, 0, 2), "cpu")
    assert torch.equal(first["a"], again["a"]) and not torch.equal(first["a"], other["a"])
    assert first["a"].min() >= 0.5 and first["a"].max() < 2.0                 # log's argument: positive
    magnitude = first["b"].abs()
    assert magnitude.min() >= 0.1 and magnitude.max() < 1.0                   # never zero
    assert (first["b"] < 0).any() and (first["b"] > 0).any()


def test_an_index_input_is_drawn_over_every_valid_address():
    # a gather's index addresses dim 1 of x (100 long): host and device draws cover [0, 100), 0
    # included, and nothing outside it, where other integer inputs are ±[1, 10)
    program = parse_intent("y = gather(x, 1, idx) + j; x: f32[8, 100]; idx: i64[8, 4000]; j: i32[8, 4000]")
    host = draw_inputs(program, {}, np.random.default_rng(3))
    device = draw_tensors(program, {}, trial_generator("cpu", 3, 0, 1), "cpu")
    for idx in (host["idx"], device["idx"].numpy()):
        assert idx.min() == 0 and idx.max() == 99
    assert np.abs(host["j"]).min() >= 1 and np.abs(device["j"].numpy()).max() < 10
