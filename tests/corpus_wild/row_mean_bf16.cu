// Row means of a bf16 activation matrix (layer-norm statistics), one block per row.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void row_mean_bf16(const __nv_bfloat16* __restrict__ x, float* __restrict__ mean, int cols) {
    __shared__ float warp_sums[8];
    const __nv_bfloat16* row = x + (size_t)blockIdx.x * cols;
    __nv_bfloat16 s = __float2bfloat16(0.0f);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        // an 8-bit-mantissa running sum: after a few hundred terms new elements are mostly rounded away
        s = s + row[c];  // expect: precision
    float v = __bfloat162float(s);
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < 8 ? warp_sums[threadIdx.x] : 0.0f;
        for (int o = 4; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) mean[blockIdx.x] = v / cols;
    }
}

void layernorm_means(const __nv_bfloat16* d_x, float* d_mean, int rows, int cols) {
    row_mean_bf16<<<rows, 256>>>(d_x, d_mean, cols);
}
