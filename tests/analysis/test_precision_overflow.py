"""`precision` and `overflow`, and their fixes."""
from __future__ import annotations

from analysis_helpers import apply_fix, at_line, codes

from dice_engine.analysis import check_source


def _fixed(src: str, code: str) -> str:
    f = next(f for f in check_source(src) if f.code == code)
    assert f.fix is not None
    return apply_fix(src, f.fix)


def test_double_literal_gets_an_f_suffix():
    src = "__global__ void k(float* y) { y[threadIdx.x] = y[threadIdx.x] * 0.5 + 1.0f; }\n"
    assert codes(check_source(src)) == ["DICE-P001"]
    fixed = _fixed(src, "DICE-P001")
    assert "* 0.5f + 1.0f" in fixed and codes(check_source(fixed)) == []


def test_float_overloads_and_deliberate_doubles_are_not_findings():
    src = """\
__global__ void k(const float* x, float* y, double* z) {
    float v = x[threadIdx.x];
    y[threadIdx.x] = exp(v) + sqrt(v) + sin(v) + powf(v, 2.0f) + 0.25f;
    double d = (double)v * 0.5;
    z[threadIdx.x] = d + 1.0;
    float c = 0.5;
}
"""
    assert codes(check_source(src)) == []


def test_pow_float_int_becomes_a_multiplication():
    src = "__global__ void k(float* y) { float v = y[0]; y[threadIdx.x] = pow(v, 2); }\n"
    assert codes(check_source(src)) == ["DICE-P002"]
    fixed = _fixed(src, "DICE-P002")
    assert "(v * v)" in fixed and codes(check_source(fixed)) == []


def test_pow_with_a_fractional_double_exponent_becomes_powf():
    src = "__global__ void k(float* y) { float v = y[0]; y[threadIdx.x] = pow(v, 1.5); }\n"
    fixed = _fixed(src, "DICE-P002")
    assert "powf(v, 1.5f)" in fixed and codes(check_source(fixed)) == []


def test_half_accumulator_in_a_loop_and_lossy_atomic_target():
    src = """\
#include <cuda_fp16.h>
__global__ void k(const __half* x, __half* y, int* total, int n) {
    __half acc = __float2half(0.0f);
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += x[i];
    y[threadIdx.x] = acc;
    atomicAdd(&total[0], __half2float(acc));
}
"""
    findings = check_source(src)
    assert at_line(findings, 4) == ["DICE-P003"]
    assert at_line(findings, 6) == ["DICE-P004"]


def test_int_index_against_64bit_extent_is_widened():
    src = """\
__global__ void k(const float* x, float* y, size_t n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"""
    assert codes(check_source(src)) == ["DICE-O001"]
    fixed = _fixed(src, "DICE-O001")
    assert "size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;" in fixed
    assert codes(check_source(fixed)) == []


def test_product_of_file_constants_beyond_2_31_is_O001_and_small_ones_are_not():
    big = """\
#define W 100000
__global__ void k(float* img, int y0) {
    int x = threadIdx.x;
    int y = blockIdx.y;
    if (y < W) { int idx = y * W + x; img[idx] = 0.0f; }
}
"""
    assert at_line(check_source(big), 5) == ["DICE-O001"]
    assert codes(check_source(big.replace("100000", "1000"))) == []


def test_64bit_destination_of_a_32bit_product_is_O002():
    src = "__global__ void k(float* x) { long long i = blockIdx.x * blockDim.x + threadIdx.x; x[i] = 0.f; }\n"
    assert codes(check_source(src)) == ["DICE-O002"]
    fixed = _fixed(src, "DICE-O002")
    assert "(long long)blockIdx.x * blockDim.x" in fixed and codes(check_source(fixed)) == []



def test_a_grid_index_scaled_inside_a_product_is_O002_and_a_block_local_one_is_not():
    # the grid index sits inside the first factor: `(global id) * 4` still wraps in 32 bits before
    # the widening; `blockDim.x * threadIdx.x` is below 2^20 whatever the grid
    src = ("__global__ void k(float* x) {\n"
           "    size_t i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;\n"
           "    size_t j = blockDim.x * threadIdx.x;\n"
           "    x[i] = 0.f; x[j] = 1.f;\n}\n")
    assert at_line(check_source(src), 2) == ["DICE-O002"]
    assert at_line(check_source(src), 3) == []


ONE_TOTAL = """\
__global__ void total(const float* x, float* sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&sum[0], x[i]);
}
__global__ void warp_totals(const float* x, float* sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(sum, v);
}
__global__ void row_totals(const float* x, float* sums, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&sums[blockIdx.x], x[blockIdx.x * n + i]);
}
__global__ void strided_total(const float* x, float* sum, long long n) {
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = threadIdx.x + (long long)blockIdx.x * blockDim.x; i < n; i += stride)
        atomicAdd(sum, x[i]);
}
void run(const float* x, float* s) {
    const int n = COUNT;
    total<<<(n + 255) / 256, 256>>>(x, s, n);
    warp_totals<<<(n + 255) / 256, 256>>>(x, s, n);
    row_totals<<<1024, 256>>>(x, s, 1 << 14);
    strided_total<<<264, 512>>>(x, s, (long long)n);
}
"""


def test_one_float_total_of_more_than_2_24_atomic_adds_is_P006():
    # 2^28 elements: one add per element into sum[0] (line 3), and the grid-stride loop visits every
    # element once whatever its 264 blocks (line 17); warp leaders add 2^23 partials (under 2^24)
    # and each block its own row total: neither is flagged
    findings = check_source(ONE_TOTAL.replace("COUNT", "1 << 28"))
    assert [f.line + 1 for f in findings if f.code == "DICE-P006"] == [3, 17]
    assert "268,435,456 adds" in next(f.message for f in findings if f.code == "DICE-P006")
    # 2^22 elements: every total stays well inside float's 24 bits
    assert "DICE-P006" not in codes(check_source(ONE_TOTAL.replace("COUNT", "1 << 22")))


SERIAL = """\
__global__ void col_sum(const float* x, float* out, long long rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f, d = 0.0f, kahan = 0.0f, comp = 0.0f;
    for (long long r = 0; r < rows; ++r) {
        s += x[r * cols + c];
        d = fmaf(x[r * cols + c], 2.0f, d);
        float y = x[r * cols + c] - comp;
        float t = kahan + y;
        comp = (t - kahan) - y;
        kahan = t;
    }
    out[c] = s + d + kahan;
}
void run(const float* x, float* out) { col_sum<<<1, 64>>>(x, out, ROWS, 64); }
"""


def test_a_float_summed_serially_over_2_24_terms_is_P007_and_a_compensated_sum_is_not():
    findings = [f for f in check_source(SERIAL.replace("ROWS", "1LL << 24")) if f.code == "DICE-P007"]
    assert [f.line + 1 for f in findings] == [5, 6]
    assert "16,777,216 terms" in findings[0].message
    assert [f for f in check_source(SERIAL.replace("ROWS", "1LL << 23")) if f.code == "DICE-P007"] == []


def test_a_half2_accumulator_in_a_loop_is_P003_like_a_half_one():
    src = """#include <cuda_fp16.h>
__global__ void row_sums(const __half* x, float* out, int cols) {
    const __half2* row = reinterpret_cast<const __half2*>(x + (size_t)blockIdx.x * cols);
    __half2 acc = __float2half2_rn(0.0f);
    for (int c = threadIdx.x; c < cols / 2; c += 32) acc = __hadd2(acc, row[c]);
    const float2 f = __half22float2(acc);
    out[blockIdx.x] = f.x + f.y;
}
"""
    findings = [f for f in check_source(src) if f.code == "DICE-P003"]
    assert [f.line + 1 for f in findings] == [5] and "__half2 accumulator" in findings[0].message
    fixed = src.replace("__half2 acc = __float2half2_rn(0.0f);", "float2 acc = make_float2(0.f, 0.f);")
    fixed = fixed.replace("acc = __hadd2(acc, row[c]);", "{ float2 v = __half22float2(row[c]); acc.x += v.x; "
                                                          "acc.y += v.y; }")
    fixed = fixed.replace("const float2 f = __half22float2(acc);", "const float2 f = acc;")
    assert [f for f in check_source(fixed) if f.code == "DICE-P003"] == []
