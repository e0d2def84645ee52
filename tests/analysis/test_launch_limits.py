"""DICE-M007: a launch asking for more dynamic shared memory than a kernel gets by default."""
from __future__ import annotations

from dice_engine.analysis import Analyzer, check_source
from dice_engine.analysis.syntax import const_eval

KERNEL = """
__global__ void staged(const float* x, float* y, int cols) {
    extern __shared__ float row[];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) row[c] = x[(size_t)blockIdx.x * cols + c];
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[(size_t)blockIdx.x * cols + c] = row[c];
}
"""


def _m007(source: str) -> list:
    return [f for f in check_source(source, "f.cu") if f.code == "DICE-M007"]


def test_size_expressions_with_sizeof_are_constants():
    assert const_eval("kCols * sizeof(float)", {"kCols": 16384}) == 65536
    assert const_eval("(size_t)n * sizeof(unsigned int) + 2 * sizeof(double2)", {"n": 3}) == 44
    assert const_eval("sizeof(row)", {}) is None      # a variable's size is not known here


def test_a_launch_over_48_kib_is_reported_at_the_launch_with_its_size():
    source = KERNEL + """
void run(const float* x, float* y, int rows) {
    const int cols = 12800;
    staged<<<rows, 256, cols * sizeof(float)>>>(x, y, cols);
}
"""
    [f] = _m007(source)
    assert (f.line, f.severity, f.category) == (source.splitlines().index(
        "    staged<<<rows, 256, cols * sizeof(float)>>>(x, y, cols);"), "error", "resources")
    assert "51200 B" in f.message and "cudaFuncSetAttribute(staged" in f.message


def test_no_finding_at_the_limit_for_a_run_time_size_or_once_the_limit_is_raised():
    at_limit = KERNEL + "void run(const float* x, float* y) { staged<<<8, 256, 48 * 1024>>>(x, y, 12288); }\n"
    runtime = KERNEL + "void run(const float* x, float* y, int c) { staged<<<8, 256, c * 4>>>(x, y, c); }\n"
    raised = KERNEL + """
void run(const float* x, float* y) {
    cudaFuncSetAttribute(staged, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
    staged<<<8, 256, 65536>>>(x, y, 16384);
}
"""
    checked = KERNEL.replace("__global__", "namespace kn {\n__global__") + """}
void run(const float* x, float* y) {
    static const bool raised = cudaFuncSetAttribute(kn::staged, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    65536) == cudaSuccess;
    kn::staged<<<8, 256, 65536>>>(x, y, 16384);
}
"""
    assert not _m007(at_limit) and not _m007(runtime) and not _m007(raised) and not _m007(checked)


def test_raising_another_kernels_limit_does_not_count():
    source = KERNEL + KERNEL.replace("staged", "other") + """
void run(const float* x, float* y) {
    cudaFuncSetAttribute(other, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
    other<<<8, 256, 65536>>>(x, y, 16384);
    staged<<<8, 256, 65536>>>(x, y, 16384);
}
"""
    assert [source.splitlines()[f.line].strip()[:6] for f in _m007(source)] == ["staged"]


def test_the_finding_follows_its_launch_through_edits_in_the_editor():
    source = KERNEL + "void run(const float* x, float* y) {\n    staged<<<8, 256, 65536>>>(x, y, 16384);\n}\n"
    analyzer = Analyzer("f.cu")
    assert [f.line for f in analyzer.update(source) if f.code == "DICE-M007"] == [8]
    for edited in ("// a comment above everything\n" + source,
                   source.replace("void run(", "// between the kernel and its launch\nvoid run(")):
        moved = [(f.line, f.column) for f in analyzer.update(edited) if f.code == "DICE-M007"]
        assert moved == [(f.line, f.column) for f in _m007(edited)] == [(9, 4)]


def test_raising_the_limit_anywhere_in_the_file_clears_the_finding_in_the_editor():
    """The raise may come after the launch's function (an init function further down): the
    kernel's cached findings must not survive it."""
    source = KERNEL + "void run(const float* x, float* y) {\n    staged<<<8, 256, 65536>>>(x, y, 16384);\n}\n"
    analyzer = Analyzer("f.cu")
    assert [f.code for f in analyzer.update(source) if f.code == "DICE-M007"] == ["DICE-M007"]
    raised = source + ("void init() {\n    cudaFuncSetAttribute(staged, "
                       "cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n}\n")
    assert not [f for f in analyzer.update(raised) if f.code == "DICE-M007"]
    assert [f.code for f in analyzer.update(source) if f.code == "DICE-M007"] == ["DICE-M007"]
