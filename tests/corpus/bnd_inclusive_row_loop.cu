// Per-row L2 norm of a row-major matrix, one block per row: the accumulation loop's bound is
// inclusive, so the last thread reads the first element of the next row (or past the end).
#include <cuda_runtime.h>

constexpr int kThreads = 256;

__global__ void row_l2_norm(const float* __restrict__ x, float* __restrict__ norms, int cols) {
    __shared__ float partial[kThreads];
    const float* row = x + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c <= cols; c += kThreads) s += row[c] * row[c];  // expect: DICE-X002
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int step = kThreads / 2; step > 0; step >>= 1) {
        if (threadIdx.x < step) partial[threadIdx.x] += partial[threadIdx.x + step];
        __syncthreads();
    }
    if (threadIdx.x == 0) norms[blockIdx.x] = sqrtf(partial[0]);
}

void l2_norms(const float* x, float* norms, int rows, int cols) {
    row_l2_norm<<<rows, kThreads>>>(x, norms, cols);
}
