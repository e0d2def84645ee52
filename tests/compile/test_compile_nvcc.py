"""compile_cuda against the real nvcc (each compile is about half a second)."""
from __future__ import annotations

import stat
import subprocess
import time

import pytest

from dice_engine.compile import NvccNotFound, compile_cuda, find_nvcc, toolchain


def _has_nvcc() -> bool:
    try:
        find_nvcc()
    except NvccNotFound:
        return False
    return True


requires_nvcc = pytest.mark.skipif(not _has_nvcc(), reason="nvcc (CUDA toolkit) not installed")

GOOD = """\
namespace dice_demo {
__global__ void scale_kernel(const float* x, float* y, int n) {
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = 2.0f * tile[threadIdx.x];
}
}
"""

SPILLING = """\
__global__ void spill(float* y, int n) {
  float a[64];
  for (int i = 0; i < 64; ++i) a[i] = y[i * n + threadIdx.x];
  float s = 0;
  for (int j = 0; j < 64; ++j)
    for (int i = 0; i < 64; ++i) s += a[i] * a[(i + j) & 63];
  y[threadIdx.x] = s;
}
"""


@requires_nvcc
def test_good_kernel_resources_and_cache_hit():
    first = compile_cuda(GOOD, "sm_80", filename="good.cu")
    assert first.ok and not first.errors and not first.cached
    res = first.kernel("dice_demo::scale_kernel")
    assert res is not None and res.smem_bytes == 1024 and res.barriers == 1 and 0 < res.registers < 64
    assert first.artifact is not None and first.artifact.read_bytes()[:4] == b"\x7fELF"

    again = compile_cuda(GOOD, "sm_80", filename="good.cu")
    assert again.cached and again.ok and again.resources == first.resources
    assert again.artifact == first.artifact
    other_arch = compile_cuda(GOOD, "sm_90", filename="good.cu")
    assert not other_arch.cached


@requires_nvcc
def test_syntax_error_line_and_column():
    source = GOOD.replace("int i = blockIdx.x", "int i = blockIdx.x +* ;\n  int k = blockIdx.x")
    result = compile_cuda(source, "sm_80", filename="broken.cu")
    assert not result.ok and result.artifact is None
    err = result.errors[0]
    assert (err.file, err.line) == ("broken.cu", 4)
    assert source.splitlines()[3][err.column - 1:].startswith(";")
    assert result.first_error().startswith("broken.cu:4: ")


@requires_nvcc
def test_register_cap_forces_spills():
    free = compile_cuda(SPILLING, "sm_80", filename="spill.cu").resources["spill"]
    capped = compile_cuda(SPILLING, "sm_80", flags=["-maxrregcount=24"], filename="spill.cu")
    capped = capped.resources["spill"]
    assert free.spill_bytes == 0 and capped.registers <= 24
    assert capped.spill_store_bytes > 0 and capped.spill_load_bytes > 0


def test_missing_nvcc_says_how_to_fix(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    for var in ("CUDA_HOME", "CUDA_PATH", "DICE_NVCC"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(toolchain, "FALLBACK_DIRS", [])
    with pytest.raises(NvccNotFound, match="install the CUDA Toolkit"):
        compile_cuda(GOOD)
    with pytest.raises(NvccNotFound, match="nvccPath"):
        compile_cuda(GOOD, nvcc="/nonexistent/nvcc")
    assert not toolchain.nvcc_found()


def test_timeout_kills_the_compiler(tmp_path):
    fake = tmp_path / "nvcc"
    marker = tmp_path / "still-running"
    # answers --version at once, otherwise starts a grandchild that would outlive a plain kill
    fake.write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'release 0.0'; exit 0; }\n"
                    f"(sleep 1; touch {marker}) &\nsleep 30\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    result = compile_cuda(GOOD, nvcc=str(fake), timeout=0.5, filename="slow.cu")
    assert not result.ok
    assert result.errors[0].message == "nvcc did not finish within 0.5 s and was stopped"
    time.sleep(1.5)
    assert not marker.exists()


@requires_nvcc
def test_executable_output_runs_from_the_cache():
    source = '#include <cstdio>\n__global__ void k(int* y) { y[0] = 1; }\nint main() { std::puts("ran"); }\n'
    built = compile_cuda(source, "sm_80", output="executable")
    again = compile_cuda(source, "sm_80", output="executable")
    assert built.ok and again.cached and again.artifact == built.artifact
    assert subprocess.run([str(again.artifact)], capture_output=True, text=True).stdout == "ran\n"
