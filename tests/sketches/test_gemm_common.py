"""Reading GEMM problems (sizes, layouts, batching) and rendering their epilogues."""
from __future__ import annotations

from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches.fusion import epilogue_inputs
from dice_engine.sketches.gemm_common import GemmProblem, read_problem, render_epilogue


def gemm(text: str) -> GemmProblem:
    gp = read_problem(classify(parse_intent(text)))
    assert isinstance(gp, GemmProblem), gp
    return gp


def test_plain_matmul_sizes_and_layouts():
    gp = gemm("C = A @ B; A: f32[300, 200]; B: f32[200, 100]")
    assert (gp.batch, gp.M, gp.N, gp.K) == (1, 300, 100, 200)
    assert (gp.a.layout, gp.b.layout) == ("row", "row")
    assert not gp.has_epilogue and render_epilogue(gp) == ""


def test_transposed_operands_are_col_major_layouts_of_the_inputs():
    gp = gemm("C = A.T @ W.T; A: f16[64, 128]; W: f16[32, 64]")
    assert (gp.M, gp.N, gp.K) == (128, 32, 64)
    assert (gp.a.input_name, gp.a.layout) == ("A", "col")
    assert (gp.b.input_name, gp.b.layout) == ("W", "col")
    assert gp.a.leading_dim("A", gp) == 128     # A.T's storage rows are A's rows of M elements
    assert gp.b.leading_dim("B", gp) == 64      # W's rows hold K elements


def test_batched_and_broadcast_operands():
    gp = gemm("C = A @ B; A: f32[4, 30, 20]; B: f32[20, 10]")
    assert gp.batch == 4 and gp.a.batched and not gp.b.batched
    gp = gemm("C = A @ B; A: f32[1, 30, 20]; B: f32[6, 20, 10]")
    assert gp.batch == 6 and not gp.a.batched and gp.b.batched


def test_symbolic_sizes_stay_symbols():
    gp = gemm("C = A @ B; A: f32[M, 512]; B: f32[512, 256]; M=777")
    assert gp.M == "M" and gp.hint(gp.M) == 777
    assert gp.is_multiple(gp.K, 8) and not gp.is_multiple(gp.M, 1)


def test_prologue_on_an_operand_is_unsupported():
    why = read_problem(classify(parse_intent("C = relu(A) @ B; A: f32[64, 64]; B: f32[64, 64]")))
    assert isinstance(why, str) and "prologue" in why


def test_epilogue_reads_bias_by_column_and_residual_by_position():
    gp = gemm("y = gelu(x @ W + b) + R; x: f32[64, 32]; W: f32[32, 16]; b: f32[16]; R: f32[64, 16]")
    assert [n.name for n in epilogue_inputs(gp.problem)] == ["b", "R"]
    code = render_epilogue(gp)
    assert "b[(long long)col]" in code
    assert "R[(long long)row * N + (long long)col]" in code
    assert "erff(" in code and "float acc" in code


def test_epilogue_broadcasts_over_the_batch_and_converts_half_inputs():
    gp = gemm("y = A @ B + R; A: f16[4, 64, 32]; B: f16[32, 16]; R: f16[4, 64, 16]")
    code = render_epilogue(gp)
    assert "__half2float(R[(long long)batch * M * N + (long long)row * N + (long long)col])" in code


def test_column_major_option_and_oversized_problems_are_refused():
    why = read_problem(classify(parse_intent("C = A @ B; A: f32[64, 64]; B: f32[64, 64]; layout=col")))
    assert isinstance(why, str) and "A.T" in why
    why = read_problem(classify(parse_intent("C = A @ B; A: f32[70000, 4, 4]; B: f32[70000, 4, 4]")))
    assert isinstance(why, str) and "65535" in why


def test_tensors_named_like_kernel_identifiers_are_renamed_in_the_kernel_only():
    gp = gemm("y = K @ acc + row; K: f32[8, 8]; acc: f32[8, 8]; row: f32[8]")
    assert (gp.a.param, gp.b.param) == ("K_", "acc_")
    assert "row_[(long long)col]" in render_epilogue(gp)
