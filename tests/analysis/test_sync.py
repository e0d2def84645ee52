"""`sync`: barriers and warp-synchronous operations not every participant reaches."""
from __future__ import annotations

from analysis_helpers import apply_fix, at_line, codes

from dice_engine.analysis import check_source

DIVERGENT = """\
__global__ void k(float* out) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    s[tid] = out[tid];
    if (tid < 64) {
        s[tid] += s[tid + 64];
        __syncthreads();
    }
    out[tid] = s[tid];
}
"""


def test_barrier_under_thread_dependent_condition_is_S001_with_exact_range():
    findings = [f for f in check_source(DIVERGENT, "k.cu") if f.category == "sync"]
    assert codes(findings) == ["DICE-S001"]
    f = findings[0]
    assert (f.line, f.column, f.end_line, f.end_column) == (6, 8, 6, 23)
    assert f.severity == "error" and "`tid < 64` (line 5)" in f.message


def test_hoisting_fix_moves_the_barrier_after_the_branch_and_clears_the_finding():
    f = next(f for f in check_source(DIVERGENT) if f.code == "DICE-S001")
    fixed = apply_fix(DIVERGENT, f.fix)
    assert "    }\n    __syncthreads();\n    out[tid]" in fixed
    assert "DICE-S001" not in codes(check_source(fixed))


def test_no_hoisting_when_the_barrier_is_in_the_middle_of_the_branch():
    barrier = "        __syncthreads();\n"
    src = DIVERGENT.replace(barrier, barrier + "        s[tid] *= 2.0f;\n")
    f = next(f for f in check_source(src) if f.code == "DICE-S001")
    assert f.fix is None


def test_block_uniform_conditions_and_loops_are_fine():
    src = """\
__global__ void k(float* x, int n, int flag) {
    __shared__ float s[256];
    if (blockIdx.x > 3 && flag) { __syncthreads(); }
    for (int t = 0; t < n; t += blockDim.x) { s[threadIdx.x] = x[t + threadIdx.x]; __syncthreads(); }
}
"""
    assert [f for f in check_source(src) if f.category == "sync"] == []


def test_early_return_then_barrier_is_S002():
    src = """\
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = x[i];
    __syncthreads();
}
"""
    assert at_line(check_source(src), 5) == ["DICE-S002"]


def test_barrier_in_a_thread_dependent_loop_is_S003():
    src = """\
__global__ void k(const int* len, float* y) {
    for (int j = 0; j < len[threadIdx.x]; ++j) {
        __syncthreads();
    }
}
"""
    assert at_line(check_source(src), 3) == ["DICE-S003"]


def test_warp_uniform_condition_allows_full_mask_shuffles():
    src = """\
__global__ void k(float* y) {
    int warp = threadIdx.x / 32;
    float v = y[threadIdx.x];
    if (warp == 1) v += __shfl_xor_sync(0xffffffff, v, 1);
    if (threadIdx.x < 64) v += __shfl_xor_sync(0xffffffff, v, 2);
    y[threadIdx.x] = v;
}
"""
    assert [f for f in check_source(src) if f.category == "sync"] == []


def test_shuffle_mask_naming_absent_lanes_is_S004():
    src = """\
__global__ void k(float* y) {
    float v = y[threadIdx.x];
    if ((threadIdx.x & 31) < 8) v += __shfl_down_sync(0xffffffff, v, 4);
    if ((threadIdx.x & 31) < 8) v += __shfl_down_sync(0xff, v, 4);
    y[threadIdx.x] = v;
}
"""
    findings = check_source(src)
    assert at_line(findings, 3) == ["DICE-S004"]
    assert at_line(findings, 4) == []


HELPER_UNDER_BRANCH = """\
__device__ float block_total(float v, float* sh) {
    sh[threadIdx.x] = v;
    __syncthreads();
    return sh[0];
}
__global__ void pool(const float* x, const int* lengths, float* out) {
    __shared__ float sh[256];
    float total = block_total(x[threadIdx.x], sh);
    if (threadIdx.x < lengths[blockIdx.x]) {
        out[blockIdx.x] = block_total(x[threadIdx.x], sh);
    }
}
"""


def test_a_helper_with_a_barrier_called_under_a_divergent_branch_is_reported_at_the_call():
    # the helper is fine when every thread calls it (line 8); the divergent call (line 10) is the
    # defect, and moving it out of the branch is not a hoist the fix can make for a call
    findings = [f for f in check_source(HELPER_UNDER_BRANCH) if f.category == "sync"]
    assert [(f.code, f.line + 1) for f in findings] == [("DICE-S001", 10)]
    assert "`block_total`, which waits at `__syncthreads` (line 3)" in findings[0].message
    assert findings[0].fix is None
