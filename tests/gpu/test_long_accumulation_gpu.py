"""Long accumulations on a GPU at their full shapes: each kernel's max error against a float64
truth (fresh random inputs, output poisoned) is at most twice PyTorch's own fp32 error (cuBLAS
for the products, TF32 off). Every run is a child process with a timeout; times are printed."""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
CHILD = Path(__file__).with_name("long_accumulation_child.py")
GEMV = "y = A @ x; A: f32[2048, 1048576]; x: f32[1048576, 1]"
GEMM = "C = A @ B; A: f32[256, 524288]; B: f32[524288, 256]"
ROWS = "s = sum(x, dim=1); x: f32[16, 4194304]"
COLUMNS = "s = sum(x, dim=0); x: f32[1048576, 64]"
FULL = "s = sum(x); x: f32[67108864]"
# KernelBench level 1 tasks 47/48 (torch.rand inputs: positive, the worst case for a serial sum)
KB_SUM = "s = sum(x, dim=1); x: f32[128, 4096, 4095]"
KB_MEAN = "s = mean(x, dim=1); x: f32[128, 4096, 4095]"
RAND_DRAWN = {KB_SUM, KB_MEAN}
CASES = [
    (GEMV, "gemm.gemv_warp_rows", None, "A @ x"),
    (GEMV, "gemm.gemv_warp_rows", {"k_splits": 1}, "A @ x"),   # one warp per row: the lanes' blocks
    (GEMM, "gemm.simt_tiled", None, "A @ B"),
    (GEMM, "gemm.simt_tiled", {"k_splits": 128}, "A @ B"),
    (ROWS, "reduction.rows", None, "x.sum(dim=1)"),
    (ROWS, "reduction.split_rows", None, "x.sum(dim=1)"),
    (COLUMNS, "reduction.columns", None, "x.sum(dim=0)"),
    (COLUMNS, "reduction.columns", {"chunks": 1}, "x.sum(dim=0)"),
    (FULL, "reduction.split_rows", None, "x.sum()"),
    # the default, then the earlier unroll and a PyTorch-like 32 x 16 block: their times tell
    # which point the prior should take
    (KB_SUM, "reduction.columns", None, "x.sum(dim=1)"),
    (KB_SUM, "reduction.columns", {"unroll": 4}, "x.sum(dim=1)"),
    (KB_SUM, "reduction.columns", {"tile": 32, "split": 16, "unroll": 4}, "x.sum(dim=1)"),
    (KB_SUM, "reduction.columns", {"tile": 256, "split": 1}, "x.sum(dim=1)"),
    (KB_MEAN, "reduction.columns", None, "x.mean(dim=1)"),
]


# The GPU itself is checked by tests/conftest.py (without initialising CUDA in this process);
# the child fails with CUDA's own message when torch has no CUDA.
@pytest.mark.skipif(shutil.which("nvcc") is None or importlib.util.find_spec("torch") is None,
                    reason="needs nvcc and torch")
@pytest.mark.parametrize("intent, sketch, point, expr", CASES,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_error_is_at_most_twice_pytorchs(intent, sketch, point, expr):
    case = {"intent": intent, "sketch": sketch, "point": point, "expr": expr, "arch": "sm_90", "seed": 12345,
            "draw": "rand" if intent in RAND_DRAWN else "randn"}
    run = subprocess.run([sys.executable, str(CHILD), json.dumps(case)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert "error" not in result, result
    print(f"{sketch} {result['tokens']}: error {result['dice_error']:.3g} "
          f"(PyTorch {result['torch_error']:.3g}), "
          f"{result['dice_ms'] * 1e3:.1f} us (PyTorch {result['torch_ms'] * 1e3:.1f} us)")
    assert result["unwritten"] == 0
    assert result["dice_error"] <= 2 * result["torch_error"], result
