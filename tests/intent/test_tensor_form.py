"""Tensor-form intents → programs, and the exact ranges of refusals."""
from __future__ import annotations

import pytest

from dice_engine.intent import IntentError, default_kernel_name, parse_intent
from dice_engine.ir.patterns import classify


def describe(program) -> str:
    return repr(program.output)


# (intent, expected output expression as Node.__repr__ prints it)
PROGRAMS = [
    ("y = softmax(x, dim=1); x: f32[4096, 1024]", "softmax(x:f32[4096, 1024], dim=1)"),
    ("C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]; accumulate=f32",
     "matmul(A:f16[4096, 4096], B:f16[4096, 4096])"),
    ("y = gelu(x @ W + b); x: bf16[8192, 1024]; W: bf16[1024, 4096]; b: bf16[4096]",
     "gelu(add(matmul(x:bf16[8192, 1024], W:bf16[1024, 4096]), b:bf16[4096]), approximate='none')"),
    ("s = sum(x, dim=0); x: f32[16384, 16384]", "sum(x:f32[16384, 16384], dim=(0,), keepdim=False)"),
    ("y = relu(a) * 2.5 + b; a, b: f32[67108864]", "add(mul(relu(a:f32[67108864]), 2.5), b:f32[67108864])"),
    ("y = torch.softmax(x, -1); x: f32[N, 1000]; N=777", "softmax(x:f32['N', 1000], dim=1)"),
    ("y = F.log_softmax(x, dim=0); x: f16[33, 65]", "log_softmax(x:f16[33, 65], dim=0)"),
    ("y = x.sum(dim=1, keepdim=True); x: f32[4, 5]", "sum(x:f32[4, 5], dim=(1,), keepdim=True)"),
    ("y = mean(x, dim=(0, 1)); x: f64[3, 5, 7]", "mean(x:f64[3, 5, 7], dim=(0, 1), keepdim=False)"),
    ("i = argmax(x, dim=1); x: f32[100, 37]", "argmax(x:f32[100, 37], dim=(1,), keepdim=False)"),
    ("i = x.argmin(0); x: bf16[100, 37]", "argmin(x:bf16[100, 37], dim=(0,), keepdim=False)"),
    ("m = max(x, dim=1); x: f32[64, 64]", "max(x:f32[64, 64], dim=(1,), keepdim=False)"),
    ("m = max(a, b); a: f32[64]; b: f32[64]", "maximum(a:f32[64], b:f32[64])"),
    ("m = torch.min(a, b); a: i32[64]; b: i32[64]", "minimum(a:i32[64], b:i32[64])"),
    ("p = prod(x); x: f32[10]", "prod(x:f32[10], dim=(0,), keepdim=False)"),
    ("y = F.layer_norm(x, [1024], w, b, eps=1e-5); x: f32[8, 1024]; w, b: f32[1024]",
     "layer_norm(x:f32[8, 1024], w:f32[1024], b:f32[1024], eps=1e-05)"),
    ("y = rms_norm(x, [512], weight=g); x: bf16[N, 512]; g: bf16[512]",
     "rms_norm(x:bf16['N', 512], g:bf16[512], eps=None)"),
    ("y = cumsum(x, dim=1); x: i32[16, 1000]", "cumsum(x:i32[16, 1000], dim=1)"),
    ("y = x.T; x: f32[1000, 333]", "permute(x:f32[1000, 333], dims=(1, 0))"),
    ("y = transpose(x, 0, 2); x: f16[4, 5, 6]", "permute(x:f16[4, 5, 6], dims=(2, 1, 0))"),
    ("y = x.permute(1, 0, 2); x: f32[2, 3, 4]", "permute(x:f32[2, 3, 4], dims=(1, 0, 2))"),
    ("C = torch.bmm(A, B); A: f32[8, 128, 64]; B: f32[8, 64, 32]",
     "matmul(A:f32[8, 128, 64], B:f32[8, 64, 32])"),
    ("y = conv2d(x, w, b, padding=1); x: f32[2, 3, 32, 32]; w: f32[8, 3, 3, 3]; b: f32[8]",
     "conv2d(x:f32[2, 3, 32, 32], w:f32[8, 3, 3, 3], b:f32[8], "
     "dilation=(1, 1), padding=(1, 1), stride=(1, 1))"),
    ("y = F.max_pool2d(x, kernel_size=2); x: f16[2, 3, 8, 8]",
     "max_pool2d(x:f16[2, 3, 8, 8], kernel_size=(2, 2), padding=(0, 0), stride=(2, 2))"),
    ("y = avg_pool2d(x, (3, 3), stride=(2, 2), padding=1); x: f32[1, 4, 15, 15]",
     "avg_pool2d(x:f32[1, 4, 15, 15], kernel_size=(3, 3), padding=(1, 1), stride=(2, 2))"),
    ("y = -x ** 2; x: f32[4]", "neg(pow(x:f32[4], 2))"),
    ("y = where(x > 0, x, 0.1 * x); x: f32[9]", "where(gt(x:f32[9], 0), x:f32[9], mul(0.1, x:f32[9]))"),
    ("y = clamp(x, min=0.0, max=6.0); x: f16[1000]", "clamp(x:f16[1000], max=6.0, min=0.0)"),
    ("y = leaky_relu(x, 0.2) + sigmoid(x) - silu(x); x: f32[77]",
     "sub(add(leaky_relu(x:f32[77], negative_slope=0.2), sigmoid(x:f32[77])), silu(x:f32[77]))"),
    ("y = gelu(x, approximate='tanh'); x: bf16[1024]", "gelu(x:bf16[1024], approximate='tanh')"),
    ("y = exp(x) / sqrt(abs(x)) + log(x) * rsqrt(x) - tanh(x); x: f64[5]",
     "sub(add(div(exp(x:f64[5]), sqrt(abs(x:f64[5]))), mul(log(x:f64[5]), rsqrt(x:f64[5]))), "
     "tanh(x:f64[5]))"),
    ("y = pow(x, 3) + a * b; x, a: f32[4, 1]; b: f32[1, 8]",
     "add(pow(x:f32[4, 1], 3), mul(a:f32[4, 1], b:f32[1, 8]))"),
    ("y = (a < b) & (a != 0); a, b: i32[10]", "logical_and(lt(a:i32[10], b:i32[10]), ne(a:i32[10], 0))"),
    # several assignments: earlier names are intermediates, inlined
    ("h = x @ W\ny = relu(h + b)\nx: f16[256, 128]; W: f16[128, 64]; b: f16[64]",
     "relu(add(matmul(x:f16[256, 128], W:f16[128, 64]), b:f16[64]))"),
    # lookups: gather (and the method form), index_select and embedding are gathers
    ("y = x.gather(1, idx) * 2; x: f32[64, 100]; idx: i64[64, 7]",
     "mul(gather(x:f32[64, 100], idx:i64[64, 7], dim=1), 2)"),
    ("y = index_select(x, 0, rows); x: f32[100, 33]; rows: i64[9]",
     "gather(x:f32[100, 33], where(ge(index(, dim=0), 0), reshape(rows:i64[9], shape=(9, 1)), "
     "reshape(rows:i64[9], shape=(9, 1))), dim=0)"),
    ("y = F.embedding(ids, table); ids: i64[2, 3]; table: bf16[1000, 64]",
     "reshape(gather(table:bf16[1000, 64], where(ge(index(, dim=0), 0), "
     "reshape(ids:i64[2, 3], shape=(6, 1)), reshape(ids:i64[2, 3], shape=(6, 1))), dim=0), "
     "shape=(2, 3, 64))"),
]


@pytest.mark.parametrize("text,expected", PROGRAMS, ids=[t for t, _ in PROGRAMS])
def test_tensor_form_program(text, expected):
    program = parse_intent(text)
    assert describe(program) == expected
    classify(program)   # every example is servable by one kernel


def test_inputs_symbols_and_options():
    p = parse_intent("y = x * s; x: f32[N, 1024]; s: f32[1024]; N=8192; arch=sm_80; goal=latency; "
                     "budget=12; name=scale_rows; layout=row")
    assert list(p.inputs) == ["x", "s"]
    assert p.inputs["x"].shape == ("N", 1024)
    assert p.symbols == {"N": 8192}
    assert p.options == {"arch": "sm_80", "goal": "latency", "budget": "12", "name": "scale_rows",
                         "layout": "row"}
    assert p.output_name == "y"
    assert default_kernel_name(p) == "scale_rows"


def test_words_inside_the_tensor_form_give_target_goal_and_hints():
    p = parse_intent("y = softmax(x, dim=1); x: f32[4096, 1024]; one warp per row, on an A100, low latency")
    assert p.options == {"arch": "sm_80", "gpu": "A100", "goal": "latency", "hints": "warp_per_row"}
    p = parse_intent("y = softmax(x, dim=1)；x: f32[4096, 1024]；针对计算能力8.0，使用共享内存")
    assert p.options == {"arch": "sm_80", "hints": "shared_memory"}
    p = parse_intent("y = exp(x); x: f32[8]; on an A100; arch=sm_90")
    assert p.options == {"arch": "sm_90"}     # an explicit option wins over words


def test_expression_may_wrap_across_lines_inside_brackets():
    p = parse_intent("y = gelu(x @ W\n    + b)\nx: bf16[8, 16]; W: bf16[16, 32]; b: bf16[32]")
    assert p.output.op == "gelu" and p.output.args[0].op == "add"


def test_casts():
    for text in ("y = x.float() * 2; x: f16[10]", "y = x.to(f32) * 2; x: f16[10]"):
        cast = parse_intent(text).output.args[0]
        assert cast.op == "cast" and cast.dtype.name == "f32"


def test_unbound_symbol_and_override():
    text = "y = relu(x); x: f32[M, K]"
    assert parse_intent(text).symbols == {"M": None, "K": None}
    assert parse_intent(text, M=3, K=5).symbols == {"M": 3, "K": 5}


def test_low_precision_matmul_accumulates_in_f32():
    p = parse_intent("C = A @ B; A, B: f16[64, 64]")
    assert p.output.dtype.name == "f16" and p.options["accumulate"] == "f32"


def test_precision_override_changes_float_inputs_only():
    p = parse_intent("y = x + i; x: f32[8]; i: i32[8]", precision="bf16")
    assert p.inputs["x"].dtype.name == "bf16" and p.inputs["i"].dtype.name == "i32"


def test_arch_named_gpu_keeps_the_gpu():
    p = parse_intent("y = exp(x); x: f32[8]", arch="H200")
    assert p.options["arch"] == "sm_90" and p.options["gpu"] == "H200"
    p = parse_intent("y = exp(x); x: f32[8]; arch=H200", arch="sm_80")
    assert p.options == {"arch": "sm_80"}


def test_default_kernel_name_is_an_identifier():
    assert default_kernel_name(parse_intent("y = softmax(x, dim=1); x: f32[N, 1000]")) == "softmax_f32_Nx1000"
    assert default_kernel_name(parse_intent("y = relu(a) + b; a, b: f16[7]")) == "map_f16_7"


# (intent, the text the error must underline, a piece of the message)
ERRORS = [
    ("y = gather(x, 1, idx); x: f32[64, 100]; idx: f32[64, 7]", "idx", "index must be an integer tensor"),
    ("y = gather(x, 1, idx); x: f32[64, 100]; idx: i64[65, 7]", "idx", "larger than the input along dim 0"),
    ("y = embedding(ids, t, max_norm=1.0); ids: i64[4]; t: f32[9, 2]", "1.0", "max_norm"),
    ("y = sofmax(x, dim=1); x: f32[4096, 1024]", "sofmax", "did you mean softmax?"),
    ("C = A @ B; A: f32[4096, 1024]; B: f32[512, 64]", "B", "[4096, 1024] @ [512, 64]"),
    ("y = softmax(x, dim=3); x: f32[4, 4]", "3", "dim 3 is out of range for a tensor of rank 2"),
    ("y = softmax(x, 2); x: f32[4, 4]", "2", "out of range"),
    ("y = relu(x); x: f33[4]", "f33", "unknown dtype 'f33' — did you mean f32?"),
    ("y = relu(z); x: f32[4]", "z", "unknown name 'z'"),
    ("y = relu(x); x: f32[4]; w: f32[4]", "w", "declared but not used"),
    ("x: f32[4]", "x: f32[4]", "no output"),
    ("y = softmax(x, dm=1); x: f32[4, 4]", "dm=1", "did you mean dim?"),
    ("y = a + b; a: f32[4]; b: f32[5]", "b", "do not broadcast"),
    ("y = relu(x; x: f32[4]", "x", "expected ',' or ')'"),
    ("y = x + ; x: f32[3]", "+", "expected an expression"),
    ("y = sum(x, dim=(0, 5)); x: f32[3, 3]", "(0, 5)", "dim 5"),
    ("y = exp(x); x: f32[4]; arch=sm_12", "sm_12", "unsupported architecture"),
    ("y = x * 2; x: f32[M]; N=5", "N", "no declared shape uses 'N'"),
    ("y = gelu(x, approximate='fast'); x: f32[4]", "'fast'", "approximate"),
    ("y = x.foo; x: f32[3, 3]", "foo", "unknown attribute"),
    ("y = softmax(x); x: f32[4, 4]", "softmax(x)", "needs dim="),
    ("y = layer_norm(x, [512]); x: f32[4, 1024]", "[512]", "does not match"),
    ("h = exp(x); y = relu(x); x: f32[4]", "h", "never used"),
    ("y = relu(x); x: f32[4]; goal=speed", "speed", "unknown goal"),
    ("y = x @ w; x: f32[4, 8]; w: f16[8, 2]", "w", "one dtype"),
    ("y = max_pool2d(x); x: f32[1, 1, 4, 4]", "max_pool2d(x)", "kernel_size"),
    ("y = relu(x); x: f32[0]", "0", "at least 1"),
    ("y = x $ 2; x: f32[4]", "$", "unexpected character"),
    ("y = relu(x); x: f32[4]; x: f32[5]", "x", "declared twice"),
    ("y = cumsum(x, dim=1, keepdim=True); x: f32[4, 4]", "keepdim=True", "no argument 'keepdim'"),
    ("y = a < b < c; a, b, c: f32[4]", "<", "chained comparisons"),
    ("y = relu(x); x f32[4]", "x f32[4]", "expected a declaration"),
    ("y = relu(x); x: f32[4]; make it good", "make it good", "words naming a target GPU"),
]


@pytest.mark.parametrize("text,underlined,message", ERRORS, ids=[t for t, _, _ in ERRORS])
def test_tensor_form_error_range(text, underlined, message):
    with pytest.raises(IntentError) as info:
        parse_intent(text)
    e = info.value
    assert text[e.start:e.end] == underlined
    assert message in e.message


def test_error_range_points_at_the_right_occurrence():
    text = "y = relu(x); x: f32[4]; x: f32[5]"
    with pytest.raises(IntentError) as info:
        parse_intent(text)
    assert info.value.start == text.rindex("x:")


def test_bad_override_is_an_intent_error():
    with pytest.raises(IntentError, match="unknown option"):
        parse_intent("y = relu(x); x: f32[4]", colour="red")
    with pytest.raises(IntentError, match="precision"):
        parse_intent("y = relu(x); x: f32[4]", precision="f33")
