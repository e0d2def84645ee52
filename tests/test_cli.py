"""The `dice` command in a real subprocess: exit codes, JSON shapes, no tracebacks."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) not installed")
MAP = "y = relu(a) * 2.5 + b; a, b: f32[1048576]"


def dice(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "dice_engine", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})
    assert "Traceback" not in done.stderr, done.stderr
    return done


@needs_nvcc
def test_generate_json_is_the_documented_object():
    done = dice("generate", MAP, "--arch", "a100", "--budget", "2", "--format", "json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) == {"source", "kernel", "launcher", "arch", "sketch", "tokens", "resources", "verified",
                        "time_us", "reference_time_us", "rounds"}
    assert out["arch"] == "sm_80" and out["sketch"] == "elementwise.fused"
    assert set(out["resources"]) == {"registers", "spill_bytes", "smem_bytes", "occupancy"}
    assert out["verified"] is None and out["time_us"] is None


@needs_nvcc
def test_generate_text_is_a_cuda_file_with_a_report(tmp_path):
    done = dice("generate", MAP, "--budget", "1", "--out", str(tmp_path / "k.cu"))
    assert done.returncode == 0, done.stderr
    assert "__global__" in (tmp_path / "k.cu").read_text()
    report = done.stdout.strip().splitlines()
    assert report[0].startswith("// DICE report:") and all(line.startswith("//") for line in report)
    assert any("occupancy" in line for line in report)


def test_an_intent_that_cannot_be_served_is_one_line_and_exit_1():
    done = dice("generate", "a matrix multiplication with shared memory")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "no shape given" in done.stderr


def test_missing_nvcc_is_exit_1_with_the_fix():
    done = dice("generate", MAP, env={"DICE_NVCC": "/nonexistent/nvcc"})
    assert done.returncode == 1 and "install the CUDA Toolkit" in done.stderr


@pytest.mark.parametrize("args", [
    ("generate",),
    ("generate", MAP, "--arch", "sm_99"),
    ("generate", MAP, "--budget", "0"),
    ("generate", MAP, "--write"),
    ("generate", "missing.cu"),
    ("frobnicate",),
])
def test_usage_errors_exit_2(args):
    assert dice(*args).returncode == 2


@needs_nvcc
def test_generate_file_write_rewrites_regions_in_place(tmp_path):
    path = tmp_path / "k.cu"
    original = "// @dice: y = x * 2; x: f32[1024]\nint untouched;\n"
    path.write_text(original)
    done = dice("generate", str(path), "--write", "--budget", "1")
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    assert text.startswith("// @dice: y = x * 2; x: f32[1024]\n// @dice-begin ")
    assert text.endswith("// @dice-end\nint untouched;\n")
    assert "generated" in done.stderr and done.stdout == ""

    path.write_text(original + "// @dice: y = x * 2\n")   # no declaration of x: cannot be served
    done = dice("generate", str(path), "--format", "json", "--budget", "1")
    assert done.returncode == 1
    out = json.loads(done.stdout)
    assert [i["status"] for i in out["intents"]] == ["generated", "error"]
    assert out["intents"][1]["line"] == 3


@needs_nvcc
def test_check_exit_code_follows_error_findings(tmp_path):
    good = tmp_path / "good.cu"
    good.write_text("__global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n")
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k(float* y) { y[threadIdx.x] = 1.0f }\n")
    ok = dice("check", str(good), "--format", "json")
    assert ok.returncode == 0 and json.loads(ok.stdout) == []
    failed = dice("check", str(bad), "--format", "json")
    findings = json.loads(failed.stdout)
    assert failed.returncode == 1
    assert any(f["category"] == "compile" and f["severity"] == "error" and f["line"] == 1 for f in findings)
    sarif = json.loads(dice("check", str(bad), "--format", "sarif").stdout)
    assert sarif["version"] == "2.1.0"


def test_doctor_reports_the_toolchain():
    done = dice("doctor", "--format", "json")
    report = json.loads(done.stdout)
    assert "nvcc" in report and "gpu" in report
    assert done.returncode == (0 if report["nvcc"]["found"] else 1)


def test_bench_without_a_gpu_runner_says_so_and_exits_1(tmp_path):
    from dice_engine.runner import GpuRunner
    with GpuRunner() as runner:
        if runner.available():
            pytest.skip("a GPU runner is present: the benchmark would run")
    done = dice("bench", "--out", str(tmp_path), "--cases", "relu_f32")
    assert done.returncode == 1
    assert "no GPU runner" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "RESULTS.md").exists()


RACY = """\
#include <cuda_runtime.h>
__global__ void racy(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}
int main() {
  int* d;
  cudaMalloc(&d, 64 * sizeof(int));
  racy<<<1, 64>>>(d);
  cudaDeviceSynchronize();
  cudaFree(d);
  return 0;
}
"""


@pytest.mark.gpu
def test_check_gpu_runs_the_program_under_compute_sanitizer(tmp_path):
    path = tmp_path / "racy.cu"
    path.write_text(RACY)
    done = dice("check", str(path), "--gpu", "--format", "json")
    findings = json.loads(done.stdout)
    assert any(f["source"] == "sanitizer" and f["line"] in (4, 5) for f in findings), findings


@needs_nvcc
@pytest.mark.parametrize("intent, sketch", [
    # measured on the H200: wgmma 246 µs, mma.sync 610 µs (cuBLAS 179 µs); benchmarks/RESULTS.md
    ("C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]", "gemm.wgmma"),
    # 16 output tiles of K = 2^19 on 132 SMs: split-K, no split longer than 16384 of K
    ("C = A @ B; A: f32[256, 524288]; B: f32[524288, 256]", "gemm.simt_tiled"),
])
def test_no_gpu_generate_picks_the_family_the_h200_measured_faster(intent, sketch, tmp_path):
    done = dice("generate", intent, "--arch", "sm_90", "--budget", "8", "--format", "json",
                env={"DICE_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["sketch"] == sketch, out["tokens"]
    if sketch == "gemm.simt_tiled":
        assert 524288 // out["tokens"]["k_splits"] <= 16384, out["tokens"]
