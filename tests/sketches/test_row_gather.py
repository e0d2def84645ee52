"""row_gather.rows: cross_entropy / nll_loss per-row losses in one row pass, on the CPU emulator
against a float64 truth (random targets, ignore_index rows), and nvcc-clean renders."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dice_engine.arch import ARCHS
from dice_engine.ir import reference
from dice_engine.ir.dtypes import BF16, F16, F32, F64, I64
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.ops import const, index, input_tensor, make
from dice_engine.ir.patterns import Problem, classify
from dice_engine.sketches.row_gather import SAMPLE_INTENTS, SKETCHES, RowGatherRows

from cpu_emulation import TOLERANCE, needs_emulator, run_on_cpu
from memory_bound_checks import ARCH_NAMES, compile_clean, needs_nvcc, render_all

SKETCH = RowGatherRows()
SM90 = ARCHS["sm_90"]
IGNORE = -100


def loss_problem(rows: int, cols: int, log_softmax: bool = True, dtype=F32) -> Problem:
    """PyTorch's per-row nll loss (reduction='none', ignore_index=-100) as the KernelBench front
    end writes it: -logp[r, t[r]], 0 where t[r] is ignored."""
    x = input_tensor("x", dtype, (rows, cols))
    t = input_tensor("t", I64, (rows,))
    logp = make("log_softmax", [x], dim=1) if log_softmax else x
    hit = make("eq", [index((rows, cols), 1), make("reshape", [t], shape=(rows, 1))])
    picked = make("sum", [make("where", [hit, logp, const(0.0)])], dim=1)
    loss = make("where", [make("ne", [t, const(IGNORE)]), make("neg", [picked]), const(0.0)])
    decls = {"x": TensorDecl("x", dtype, (rows, cols)), "t": TensorDecl("t", I64, (rows,))}
    return classify(Program(decls, "y", loss))


def truth(x: np.ndarray, t: np.ndarray, log_softmax: bool) -> np.ndarray:
    x = x.astype(np.float64)
    if log_softmax:
        top = x.max(axis=1, keepdims=True)
        x = x - top - np.log(np.exp(x - top).sum(axis=1, keepdims=True))
    kept = t != IGNORE
    out = np.zeros(len(t))
    out[kept] = -x[np.flatnonzero(kept), t[kept]]
    return out


def draws(rows: int, cols: int, seed: int, dtype=np.float32) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * 4).astype(dtype)
    t = rng.integers(0, cols, rows).astype(np.int64)
    t[rng.random(rows) < 0.25] = IGNORE
    return {"x": x, "t": t}


POINTS = [
    (9, 256, {"group": 32, "threads": 64, "vec": 4, "unroll": 4}),    # warp per row, packed, unrolled
    (5, 512, {"group": 64, "threads": 128, "vec": 4, "unroll": 2}),   # block rows: shared partials
    (7, 77, {"group": 8, "threads": 64, "vec": 4, "unroll": 1}),      # 77 % 4: the scalar path
    (6, 130, {"group": 16, "threads": 64, "vec": 2, "unroll": 4}),    # unrolled loads past the row end
]


@needs_emulator
@pytest.mark.parametrize("rows,cols,point", POINTS)
def test_cross_entropy_rows_match_float64(rows, cols, point, tmp_path: Path):
    problem = loss_problem(rows, cols)
    assert SKETCH.unsupported(problem, SM90) is None
    inputs = draws(rows, cols, seed=rows * cols)
    got = run_on_cpu(SKETCH.render(problem, SM90, point, "emulated"), problem, inputs, {}, tmp_path)
    want = truth(inputs["x"], inputs["t"], True)
    assert np.all(np.abs(got - want) <= TOLERANCE["f32"] * (1 + np.abs(want)))
    assert np.all(got[inputs["t"] == IGNORE] == 0.0)


@needs_emulator
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_half_rows_accumulate_in_float(dtype, tmp_path: Path):
    rows, cols = 6, 200
    problem = loss_problem(rows, cols, dtype=dtype)
    point = {"group": 8, "threads": 64, "vec": 8, "unroll": 2}
    inputs = draws(rows, cols, seed=5)
    inputs["x"] = reference.round_to(inputs["x"], dtype)
    got = run_on_cpu(SKETCH.render(problem, SM90, point, "emulated"), problem, inputs, {}, tmp_path)
    want = truth(inputs["x"].astype(np.float64), inputs["t"], True)
    assert np.all(np.abs(got - want) <= TOLERANCE[dtype.name] * (1 + np.abs(want)))


@needs_emulator
def test_plain_gather_f64_matches(tmp_path: Path):
    rows, cols = 11, 33
    problem = loss_problem(rows, cols, log_softmax=False, dtype=F64)
    point = SKETCH.default_point(problem, SM90)
    assert point["group"] == 1
    inputs = draws(rows, cols, seed=3, dtype=np.float64)
    got = run_on_cpu(SKETCH.render(problem, SM90, point, "emulated"), problem, inputs, {}, tmp_path)
    assert np.allclose(got, truth(inputs["x"], inputs["t"], False), rtol=0, atol=1e-12)


def test_default_walks_long_rows_with_more_threads():
    short = SKETCH.default_point(loss_problem(4096, 128), SM90)
    long = SKETCH.default_point(loss_problem(32768, 4096), SM90)
    assert short["group"] < long["group"] and long["vec"] == 4
    assert SKETCH.space(loss_problem(32768, 4096), SM90).is_legal(long)


def test_programs_that_are_not_row_gathers_are_refused():
    x = input_tensor("x", F32, (8, 16))
    rows_lse = make("sum", [make("log_softmax", [x], dim=1)], dim=1)
    program = Program({"x": TensorDecl("x", F32, (8, 16))}, "y", rows_lse)
    assert "no row gather" in SKETCH.unsupported(classify(program), SM90)


@needs_nvcc
def test_kernelbench_shape_compiles_clean_for_sm90():
    problem = loss_problem(32768, 4096)
    widest = {"group": 1024, "threads": 1024, "vec": 4, "unroll": 4}
    for point in (SKETCH.default_point(problem, SM90), widest):
        compile_clean([SKETCH.render(problem, SM90, point, "xent")], "sm_90")


@needs_nvcc
@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_samples_and_corners_compile_clean(arch):
    compile_clean(render_all(SKETCHES, SAMPLE_INTENTS, arch, corners=True), arch)
