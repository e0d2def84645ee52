// Block sum with the pre-Volta "warp-synchronous" tail: a volatile pointer and no __syncwarp.
#include <cuda_runtime.h>

#define SUM_BLOCK 256

__global__ void block_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float sdata[SUM_BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (SUM_BLOCK * 2) + tid;
    float v = 0.0f;
    if (i < n) v += in[i];
    if (i + SUM_BLOCK < n) v += in[i + SUM_BLOCK];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = SUM_BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        volatile float* vs = sdata;
        vs[tid] += vs[tid + 32];
        // lanes are not in lockstep since Volta: a lane may read a neighbour's slot before it is updated
        for (int offset = 16; offset > 0; offset >>= 1) vs[tid] += vs[tid + offset];  // expect: race
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

void sum_blocks(const float* d_in, float* d_out, int n) {
    block_sum<<<(n + 2 * SUM_BLOCK - 1) / (2 * SUM_BLOCK), SUM_BLOCK>>>(d_in, d_out, n);
}
