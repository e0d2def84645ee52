// Row totals of a very wide matrix, one thread per row: each thread adds 2^25 floats serially into
// one float. The blocked variant below keeps partials of 4096 terms and is fine, as is the
// per-thread strided sum of the block reduction.
#include <cuda_runtime.h>

constexpr long long kCols = 1LL << 25;
constexpr int kChunk = 4096;

__global__ void row_total(const float* __restrict__ x, float* __restrict__ out, int rows) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* row = x + (size_t)r * kCols;
    float total = 0.0f;
    for (long long c = 0; c < kCols; ++c)
        total += row[c];  // expect: DICE-P007
    out[r] = total;
}

__global__ void row_total_blocked(const float* __restrict__ x, float* __restrict__ out, int rows) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* row = x + (size_t)r * kCols;
    double total = 0.0;
    for (long long c0 = 0; c0 < kCols; c0 += kChunk) {
        float part = 0.0f;
        for (int c = 0; c < kChunk; ++c) part += row[c0 + c];
        total += part;
    }
    out[r] = (float)total;
}

__global__ void row_total_block(const float* __restrict__ x, float* __restrict__ out) {
    __shared__ float partial[256];
    const float* row = x + (size_t)blockIdx.x * kCols;
    float acc = 0.0f;
    for (long long c = threadIdx.x; c < kCols; c += 256) acc += row[c];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

void run(const float* x, float* out) {
    row_total<<<1, 8>>>(x, out, 8);
    row_total_blocked<<<1, 8>>>(x, out, 8);
    row_total_block<<<8, 256>>>(x, out);
}
