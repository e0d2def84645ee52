"""Compiler findings: nvcc messages mapped to ranges, ptxas resources judged for the arch."""
from __future__ import annotations

import shutil

import pytest

from dice_engine.analysis import compiler_findings
from dice_engine.analysis.compiler import findings_from_result
from dice_engine.compile import CompileMessage, CompileResult, KernelResources

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


def _result(messages=(), **resources) -> CompileResult:
    return CompileResult(ok=not any(m.severity == "error" for m in messages), messages=list(messages),
                         resources=dict(resources), artifact=None, log="", cached=False)


KERNEL = """\
__global__ void __launch_bounds__(256) heavy(float* y) {
    y[threadIdx.x] = 1.0f;
}

__global__ void wide(float* y) { y[threadIdx.x] = 2.0f; }

void launch(float* y) { wide<<<1, 1024>>>(y); }

constexpr int THREADS = 256;
__global__ void __launch_bounds__(THREADS, 1) bounded(float* y) { y[threadIdx.x] = 3.0f; }
__global__ void plain(float* y) { y[threadIdx.x] = 4.0f; }
void launch_plain(float* y) { plain<<<1, THREADS>>>(y); }
"""


def test_messages_map_to_the_token_at_their_column():
    msg = CompileMessage("k.cu", 2, 5, "error", 'identifier "yy" is undefined', "20-D")
    (f,) = findings_from_result(KERNEL, "k.cu", "sm_90", _result([msg]))
    assert (f.code, f.category, f.severity, f.source) == ("DICE-E001", "compile", "error", "compiler")
    assert (f.line, f.column, f.end_line, f.end_column) == (1, 4, 1, 5)
    assert "[20-D]" in f.message


def test_messages_without_a_column_cover_the_line_and_foreign_files_go_to_the_top():
    messages = [CompileMessage("k.cu", 2, 0, "warning", "something odd"),
                CompileMessage("/usr/include/x.h", 7, 1, "warning", "header trouble")]
    first, second = findings_from_result(KERNEL, "k.cu", "sm_90", _result(messages))
    assert (first.code, first.line, first.column, first.end_column) == ("DICE-E002", 1, 4, 26)
    assert (second.line, second.column) == (0, 0) and "x.h:7" in second.message


def test_spills_stack_and_register_limited_occupancy():
    heavy = KernelResources(registers=255, spill_store_bytes=64, spill_load_bytes=32, smem_bytes=0,
                            stack_bytes=96, barriers=0)
    wide = KernelResources(registers=64, spill_store_bytes=0, spill_load_bytes=0, smem_bytes=0,
                           stack_bytes=16, barriers=0)
    resources = _result(heavy=heavy, wide=wide, bounded=wide_registers(), plain=wide_registers())
    findings = findings_from_result(KERNEL, "k.cu", "sm_90", resources)
    by_kernel = {(f.line, f.code) for f in findings}
    assert (0, "DICE-M001") in by_kernel            # spills (the stack is part of them)
    assert (4, "DICE-M002") in by_kernel            # stack without spills
    # 255 registers x 256 threads: register-limited, but __launch_bounds__ already states the
    # budget (a named constant and a minimum of one block included); the plain kernel is told
    m3s = [f for f in findings if f.code == "DICE-M003"]
    assert [f.line for f in m3s] == [10]
    assert m3s[0].data["limiter"] == "registers" and m3s[0].data["threads"] == 256
    assert all(f.category == "resources" for f in findings)


def test_a_stack_frame_points_at_the_kernels_local_array():
    source = """\
__global__ void median(const unsigned char* src, unsigned char* dst, int n) {
    __shared__ float tile[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int hist[256];
    for (int b = 0; b < 256; ++b) hist[b] = 0;
    hist[src[i]]++;
    dst[i] = (unsigned char)hist[src[i]] + (unsigned char)tile[threadIdx.x];
}
"""
    stack = KernelResources(registers=40, spill_store_bytes=0, spill_load_bytes=0, smem_bytes=1024,
                            stack_bytes=1024, barriers=0)
    findings = findings_from_result(source, "m.cu", "sm_90", _result(median=stack))
    (f,) = [f for f in findings if f.code == "DICE-M002"]
    assert f.line == 3 and "`unsigned int hist[256]`" in f.message and "1024-byte" in f.message


def wide_registers() -> KernelResources:
    return KernelResources(registers=255, spill_store_bytes=0, spill_load_bytes=0, smem_bytes=0,
                           stack_bytes=0, barriers=0)


def test_kernels_that_cannot_launch_are_errors():
    wide = KernelResources(registers=128, spill_store_bytes=0, spill_load_bytes=0, smem_bytes=0,
                           stack_bytes=0, barriers=0)
    (f,) = findings_from_result(KERNEL, "k.cu", "sm_90", _result(wide=wide))
    assert f.code == "DICE-M006" and f.severity == "error"


def test_missing_nvcc_is_one_clear_finding():
    (f,) = compiler_findings(KERNEL, "k.cu", nvcc="/nonexistent/nvcc")
    assert f.code == "DICE-E003" and "nvcc" in f.message


@needs_nvcc
def test_real_nvcc_error_lands_on_the_offending_line():
    broken = KERNEL.replace("y[threadIdx.x] = 1.0f;", "y[threadIdx.x] = undefined_name;")
    findings = compiler_findings(broken, "k.cu", "sm_90")
    errors = [f for f in findings if f.code == "DICE-E001"]
    assert errors and errors[0].line == 1
    assert "undefined_name" in broken.splitlines()[1][errors[0].column:errors[0].end_column + 20]
