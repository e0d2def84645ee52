"""GPU tests: skipped cleanly unless nvcc, pycuda and a GPU are all present."""
from __future__ import annotations

import shutil

import pytest

from dice_engine.runner import GpuRunner


@pytest.fixture(scope="session")
def runner():
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    gpu = GpuRunner(kernel_timeout_s=10.0)
    if not gpu.available():
        gpu.close()
        pytest.skip("no GPU runner (no pycuda or no GPU)")
    yield gpu
    gpu.close()
