// Stream compaction of the values above a threshold: slots are reserved in shared memory, then
// one thread reserves the block's range in the output.
#include <cuda_runtime.h>

__global__ void compact_above(const float* __restrict__ in, float* __restrict__ out, int* __restrict__ count, int n) {
    __shared__ int s_count;
    __shared__ int s_base;
    if (threadIdx.x == 0) s_count = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    int slot = -1;
    // 0.1 is a double literal: v is widened to double for every comparison
    if (v > 0.1) {  // expect: precision
        slot = atomicAdd(&s_count, 1);
        // data-dependent branch: only the threads above the threshold reach this barrier
        __syncthreads();  // expect: sync
        if (slot == 0) s_base = atomicAdd(count, s_count);
    }
    __syncthreads();
    if (slot >= 0) out[s_base + slot] = v;
}

void compact(const float* d_in, float* d_out, int* d_count, int n) {
    compact_above<<<(n + 255) / 256, 256>>>(d_in, d_out, d_count, n);
}
