// Forward differences x[i+1] - x[i] through shared memory, with an early exit for the tail.
#include <cuda_runtime.h>

#define DIFF_BLOCK 128

__global__ void forward_diff(const float* __restrict__ x, float* __restrict__ dx, int n) {
    __shared__ float s[DIFF_BLOCK + 1];
    int i = blockIdx.x * DIFF_BLOCK + threadIdx.x;
    if (i >= n) return;
    s[threadIdx.x] = x[i];
    if (threadIdx.x == DIFF_BLOCK - 1) s[DIFF_BLOCK] = (i + 1 < n) ? x[i + 1] : x[i];
    // threads past n have returned: in the last block only part of the block reaches the barrier
    __syncthreads();  // expect: sync
    if (i + 1 < n) dx[i] = s[threadIdx.x + 1] - s[threadIdx.x];
}

void differences(const float* d_x, float* d_dx, int n) {
    forward_diff<<<(n + DIFF_BLOCK - 1) / DIFF_BLOCK, DIFF_BLOCK>>>(d_x, d_dx, n);
}
