// Tree reduction with interleaved addressing and a strided index (the second step of the classic
// reduction tutorial: no divergent warps, but strided shared-memory access).
#include <cuda_runtime.h>

#define REDUCE_BLOCK 256

__global__ void reduce_interleaved(const float* in, float* out, unsigned int n) {
    __shared__ float sdata[REDUCE_BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        unsigned int index = 2 * s * tid;
        if (index < blockDim.x)
            // index = 2*s*tid: active lanes are 2s words apart, 2- to 16-way bank conflicts
            sdata[index] += sdata[index + s];  // expect: bank-conflict
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

void block_partial_sums(const float* d_in, float* d_partial, unsigned int n) {
    reduce_interleaved<<<(n + REDUCE_BLOCK - 1) / REDUCE_BLOCK, REDUCE_BLOCK>>>(d_in, d_partial, n);
}
