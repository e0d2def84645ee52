"""Parsing nvcc/ptxas output, without running nvcc (fixed logs captured from nvcc 13)."""
from __future__ import annotations

import pytest

from dice_engine.compile import kernel_base_name
from dice_engine.compile.messages import parse_messages
from dice_engine.compile.resources import parse_resources

PTXAS_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN6dice_x2tkILi4EEEvPf' for 'sm_80'
ptxas info    : Function properties for _ZN6dice_x2tkILi4EEEvPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]
ptxas info    : Function properties for _Z6helperf
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z5spillPfi' for 'sm_80'
ptxas info    : Function properties for _Z5spillPfi
    720 bytes stack frame, 488 bytes spill stores, 636 bytes spill loads
ptxas info    : Used 24 registers, used 1 barriers, 4096 bytes smem, 720 bytes cumulative stack size, \
364 bytes cmem[0]
"""


@pytest.mark.parametrize("symbol, base", [
    ("_ZN6dice_x18softmax_f32_kernelEPKfPfi", "softmax_f32_kernel"),
    ("_ZN6dice_x2tkILi4EEEvPf", "tk"),
    ("_Z5spillPfi", "spill"),
    ("_ZN12_GLOBAL__N_16kernelEv", "kernel"),
    ("_ZN1a1b3gemILi128ELi64EEEvPK6__halfPS1_", "gem"),
    ("plain_c_kernel", "plain_c_kernel"),
])
def test_kernel_base_name(symbol, base):
    assert kernel_base_name(symbol) == base


def test_resources_per_entry_function():
    res = parse_resources(PTXAS_LOG)
    assert set(res) == {"tk", "spill"}          # the non-entry helper is not a kernel
    spill = res["spill"]
    assert (spill.registers, spill.spill_store_bytes, spill.spill_load_bytes) == (24, 488, 636)
    assert (spill.smem_bytes, spill.stack_bytes, spill.barriers) == (4096, 720, 1)
    assert res["tk"].registers == 8 and res["tk"].spill_bytes == 0


def test_edg_error_columns_follow_the_callers_source():
    source = "template <typename T> __global__ void tk(T* y) { y[0] = T::nope; }\n"
    log = ("dice_src.cu(1): error: name followed by \"::\" must be a class or namespace name\n"
           "  template <typename T> __attribute__((global)) void tk(T* y) { y[0] = T::nope; }\n"
           "                                                                       ^\n"
           "          detected during instantiation of \"void tk(T *) [with T=float]\" at line 2\n\n")
    (msg,) = parse_messages(log, temp_name="dice_src.cu", filename="user.cu", source=source)
    assert (msg.file, msg.line, msg.severity) == ("user.cu", 1, "error")
    assert source[msg.column - 1:].startswith("T::nope")   # not where the rewritten echo put it
    assert "detected during instantiation" in msg.message


def test_ptxas_error_points_at_the_kernel_definition():
    source = "#include <cstdint>\n\n__global__ void\nbig(float* y) { }\n"
    log = "ptxas error   : Entry function '_Z3bigPf' uses too much shared data (0x13880 bytes, 0xc000 max)\n"
    (msg,) = parse_messages(log, temp_name="dice_src.cu", filename="user.cu", source=source)
    assert (msg.line, msg.severity) == (4, "error")
    assert "'big' uses too much shared data" in msg.message


def test_warning_code_and_header_paths_are_kept():
    log = ("/usr/include/foo.h(13): warning #177-D: variable \"x\" was declared but never referenced\n"
           "    int x = 3;\n        ^\n\n"
           "dice_src.cu:1:10: fatal error: nope.h: No such file or directory\n")
    first, second = parse_messages(log, temp_name="dice_src.cu", filename="user.cu",
                                   source='#include "nope.h"\n')
    assert (first.file, first.severity, first.code) == ("/usr/include/foo.h", "warning", "177-D")
    assert (second.file, second.line, second.column, second.severity) == ("user.cu", 1, 10, "error")
