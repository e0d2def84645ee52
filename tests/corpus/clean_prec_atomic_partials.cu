// The same totals done without one overloaded float: warp shuffles then one atomicAdd per block
// (2^19 adds), a per-row total per block, and a small grid's direct atomics (2^20 adds).
// expect: none
#include <cuda_runtime.h>

constexpr long long kElements = 1LL << 28;
constexpr int kRows = 16384, kCols = 16384;

__global__ void squared_error_blocks(const float* __restrict__ pred, const float* __restrict__ target,
                                     float* __restrict__ loss, int n) {
    __shared__ float warp_sums[16];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    if (i < n) {
        const float d = pred[i] - target[i];
        v = d * d;
    }
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? warp_sums[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) atomicAdd(loss, v);
    }
}

__global__ void row_totals(const float* __restrict__ x, float* __restrict__ sums, int cols) {
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        atomicAdd(&sums[blockIdx.x], x[(long long)blockIdx.x * cols + c]);
}

__global__ void small_total(const float* __restrict__ x, float* __restrict__ total, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, x[i]);
}

void totals(const float* pred, const float* target, float* loss, float* sums, float* total) {
    const int n = (int)kElements;
    squared_error_blocks<<<(n + 511) / 512, 512>>>(pred, target, loss, n);
    row_totals<<<kRows, 256>>>(pred, sums, kCols);
    small_total<<<4096, 256>>>(pred, total, 1 << 20);
}
