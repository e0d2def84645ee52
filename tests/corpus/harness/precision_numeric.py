"""Numeric checks for the corpus's `precision` kernels that leave no trace in PTX: accumulators
in half or bfloat16, float contributions added into an `int` by `atomicAdd`, and one-float totals
of too many terms (atomic or serial).

Each check runs the corpus kernel and a fixed twin (the change the finding's message asks for:
a float accumulator, a float atomic target) on the same random inputs, and compares both with a
float64 reference computed on the host from the very same (already rounded) inputs. The finding
is confirmed when the corpus kernel's worst relative error is at least 10x the fixed twin's and
above 1e-3: the loss comes from the flagged accumulation, not from the output format.

Launch geometry, inputs and the reference differ per kernel, so each file has a hand-written
`Check` below; a precision file without one is left to the PTX check.
"""
from __future__ import annotations

from dataclasses import dataclass

ERROR_RATIO = 10.0          # corpus kernel's error over the fixed twin's
ERROR_FLOOR = 1e-3          # and at least this much relative error


@dataclass(frozen=True)
class Check:
    fixed: str              # the fixed twin's definition (CUDA)
    body: str               # main()'s body: inputs, both launches, the reference, errors
                            # into `err_kernel` and `err_fixed`


_ATOMIC_INT = Check(
    fixed="""
__global__ void energy_total_fixed(const float* e, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&total[0], e[i] * 0.5f);
}""",
    body="""
    const int n = 1 << 20;
    std::vector<float> e(n);
    for (int i = 0; i < n; ++i) e[i] = uniform();
    float* d_e; int* d_total; float* d_total_fixed;
    cudaMalloc(&d_e, n * sizeof(float));
    cudaMalloc(&d_total, sizeof(int));
    cudaMalloc(&d_total_fixed, sizeof(float));
    cudaMemcpy(d_e, e.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_total, 0, sizeof(int));
    cudaMemset(d_total_fixed, 0, sizeof(float));
    energy_total<<<(n + 255) / 256, 256>>>(d_e, d_total, n);
    energy_total_fixed<<<(n + 255) / 256, 256>>>(d_e, d_total_fixed, n);
    check_launches();
    int total; float total_fixed;
    cudaMemcpy(&total, d_total, sizeof total, cudaMemcpyDeviceToHost);
    cudaMemcpy(&total_fixed, d_total_fixed, sizeof total_fixed, cudaMemcpyDeviceToHost);
    double want = 0;
    for (int i = 0; i < n; ++i) want += (double)(e[i] * 0.5f);
    err_kernel = relative(total, want);
    err_fixed = relative(total_fixed, want);
""")

_BF16_ROWS = Check(
    fixed="""
__global__ void row_sum_bf16_fixed(const __nv_bfloat16* x, __nv_bfloat16* y, int cols) {
    float acc = 0.0f;
    const __nv_bfloat16* row = x + blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += __bfloat162float(row[c]);
    y[blockIdx.x * blockDim.x + threadIdx.x] = __float2bfloat16(acc);
}""",
    body="""
    const int rows = 64, cols = 1 << 18, threads = 256;
    std::vector<__nv_bfloat16> x((size_t)rows * cols);
    for (auto& v : x) v = __float2bfloat16(uniform());
    __nv_bfloat16 *d_x, *d_y, *d_y_fixed;
    cudaMalloc(&d_x, x.size() * sizeof(__nv_bfloat16));
    cudaMalloc(&d_y, rows * threads * sizeof(__nv_bfloat16));
    cudaMalloc(&d_y_fixed, rows * threads * sizeof(__nv_bfloat16));
    cudaMemcpy(d_x, x.data(), x.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice);
    cudaMemset(d_y, 0xff, rows * threads * sizeof(__nv_bfloat16));        // poison: NaN
    cudaMemset(d_y_fixed, 0xff, rows * threads * sizeof(__nv_bfloat16));
    row_sum_bf16<<<rows, threads>>>(d_x, d_y, cols);
    row_sum_bf16_fixed<<<rows, threads>>>(d_x, d_y_fixed, cols);
    check_launches();
    std::vector<__nv_bfloat16> y(rows * threads), y_fixed(rows * threads);
    cudaMemcpy(y.data(), d_y, y.size() * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost);
    cudaMemcpy(y_fixed.data(), d_y_fixed, y_fixed.size() * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost);
    for (int r = 0; r < rows; ++r)
        for (int t = 0; t < threads; ++t) {
            double want = 0;
            for (int c = t; c < cols; c += threads) want += (double)__bfloat162float(x[(size_t)r * cols + c]);
            err_kernel = std::max(err_kernel, relative(__bfloat162float(y[r * threads + t]), want));
            err_fixed = std::max(err_fixed, relative(__bfloat162float(y_fixed[r * threads + t]), want));
        }
""")

_HALF_DOT = Check(
    fixed="""
__global__ void dot_half_fixed(const __half* a, const __half* b, __half* out, int n) {
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += __half2float(a[i]) * __half2float(b[i]);
    out[threadIdx.x] = __float2half(acc);
}""",
    body="""
    const int n = 1 << 20, threads = 256;
    std::vector<__half> a(n), b(n);
    for (int i = 0; i < n; ++i) { a[i] = __float2half(uniform()); b[i] = __float2half(uniform()); }
    __half *d_a, *d_b, *d_out, *d_out_fixed;
    cudaMalloc(&d_a, n * sizeof(__half));
    cudaMalloc(&d_b, n * sizeof(__half));
    cudaMalloc(&d_out, threads * sizeof(__half));
    cudaMalloc(&d_out_fixed, threads * sizeof(__half));
    cudaMemcpy(d_a, a.data(), n * sizeof(__half), cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, b.data(), n * sizeof(__half), cudaMemcpyHostToDevice);
    cudaMemset(d_out, 0xff, threads * sizeof(__half));                    // poison: NaN
    cudaMemset(d_out_fixed, 0xff, threads * sizeof(__half));
    dot_half<<<1, threads>>>(d_a, d_b, d_out, n);
    dot_half_fixed<<<1, threads>>>(d_a, d_b, d_out_fixed, n);
    check_launches();
    std::vector<__half> out(threads), out_fixed(threads);
    cudaMemcpy(out.data(), d_out, threads * sizeof(__half), cudaMemcpyDeviceToHost);
    cudaMemcpy(out_fixed.data(), d_out_fixed, threads * sizeof(__half), cudaMemcpyDeviceToHost);
    for (int t = 0; t < threads; ++t) {
        double want = 0;
        for (int i = t; i < n; i += threads) want += (double)__half2float(a[i]) * (double)__half2float(b[i]);
        err_kernel = std::max(err_kernel, relative(__half2float(out[t]), want));
        err_fixed = std::max(err_fixed, relative(__half2float(out_fixed[t]), want));
    }
""")

# The fixed twin of a grid-wide float atomic total: each thread sums its grid-stride share, the
# block adds its threads' sums in shared memory, and one atomicAdd per block reaches the total.
# `term(i)` is the contribution of element i (the corpus kernel's addend).
def block_total_twin(name: str, params: str, term: str) -> str:
    return f"""
__global__ void {name}({params}, float* total, long long n) {{
    __shared__ float partial[256];
    float v = 0.0f;
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        v += {term};
    partial[threadIdx.x] = v;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {{
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }}
    if (threadIdx.x == 0) atomicAdd(total, partial[0]);
}}"""


_GRID_TOTALS = Check(   # 2^26 like-signed addends: the one-float totals stall near 2^23
    fixed=block_total_twin("squared_error_fixed", "const float* a, const float* b",
                           "(a[i] - b[i]) * (a[i] - b[i])")
    + block_total_twin("abs_total_fixed", "const float* a", "fabsf(a[i])"),
    body="""
    const int n = 1 << 26;
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i) { a[i] = uniform(); b[i] = uniform() - 0.5f; }
    float *d_a, *d_b, *d_out;
    cudaMalloc(&d_a, (size_t)n * sizeof(float));
    cudaMalloc(&d_b, (size_t)n * sizeof(float));
    cudaMalloc(&d_out, 4 * sizeof(float));
    cudaMemcpy(d_a, a.data(), (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, b.data(), (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_out, 0, 4 * sizeof(float));
    squared_error_total<<<(n + 511) / 512, 512>>>(d_a, d_b, d_out, n);
    abs_total_strided<<<528, 256>>>(d_b, d_out + 1, n);
    squared_error_fixed<<<1024, 256>>>(d_a, d_b, d_out + 2, n);
    abs_total_fixed<<<1024, 256>>>(d_b, d_out + 3, n);
    check_launches();
    float out[4];
    cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    double squared = 0, absolute = 0;
    for (int i = 0; i < n; ++i) {
        const double d = (double)(a[i] - b[i]);
        squared += (double)(float)(d * d);
        absolute += std::fabs((double)b[i]);
    }
    err_kernel = std::min(relative(out[0], squared), relative(out[1], absolute));   // both must lose
    err_fixed = std::max(relative(out[2], squared), relative(out[3], absolute));
""")

_SERIAL_ROWS = Check(   # 2^25 terms in [1, 2) per thread: the float total stalls near 2^25
    fixed="""
__global__ void row_total_fixed(const float* __restrict__ x, float* __restrict__ out, int rows) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* row = x + (size_t)r * kCols;
    double total = 0.0;
    for (long long c = 0; c < kCols; ++c) total += row[c];
    out[r] = (float)total;
}""",
    body="""
    const int rows = 2;
    std::vector<float> x((size_t)rows * kCols);
    for (auto& v : x) v = 1.0f + uniform();
    float *d_x, *d_out;
    cudaMalloc(&d_x, x.size() * sizeof(float));
    cudaMalloc(&d_out, 2 * rows * sizeof(float));
    cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_out, 0xff, 2 * rows * sizeof(float));        // poison: NaN
    row_total<<<1, rows>>>(d_x, d_out, rows);
    row_total_fixed<<<1, rows>>>(d_x, d_out + rows, rows);
    check_launches();
    float out[2 * rows];
    cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    for (int r = 0; r < rows; ++r) {
        double want = 0;
        for (long long c = 0; c < kCols; ++c) want += (double)x[(size_t)r * kCols + c];
        err_kernel = std::max(err_kernel, relative(out[r], want));
        err_fixed = std::max(err_fixed, relative(out[rows + r], want));
    }
""")

CHECKS: dict[str, Check] = {
    "prec_atomic_grid_total.cu": _GRID_TOTALS,
    "prec_atomic_int_target.cu": _ATOMIC_INT,
    "prec_bf16_accumulator.cu": _BF16_ROWS,
    "prec_half_accumulator.cu": _HALF_DOT,
    "prec_serial_row_total.cu": _SERIAL_ROWS,
}


def host_program(include: str, check: Check) -> str:
    """A translation unit that runs the corpus kernel and its fixed twin and prints one verdict."""
    return f"""#include "{include}"
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
{check.fixed}

static unsigned long long state = 0x9E3779B97F4A7C15ull;   // fresh inputs: a fixed-seed LCG
static float uniform() {{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((state >> 40) & 0xFFFFFF) / (float)(1 << 24);      // [0, 1)
}}
static double relative(double got, double want) {{
    if (std::isnan(got)) return INFINITY;
    return std::fabs(got - want) / std::max(std::fabs(want), 1e-30);
}}
static void check_launches() {{
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {{ printf("VERDICT unchecked: %s\\n", cudaGetErrorString(err)); exit(0); }}
}}

int main() {{
    double err_kernel = 0, err_fixed = 0;
{check.body}
    bool lossy = err_kernel >= {ERROR_RATIO} * err_fixed && err_kernel > {ERROR_FLOOR};
    printf("VERDICT %s: worst relative error %.3g against a float64 reference, %.3g with the fix\\n",
           lossy ? "lossy" : "accurate", err_kernel, err_fixed);
    return 0;
}}
"""
