// expect: none
// Filters positive values into a compact output with warp-aggregated atomics: the active lanes
// elect a leader, which reserves space for all of them with one atomicAdd.
#include <cuda_runtime.h>

__device__ int atomic_agg_inc(int* ctr) {
    unsigned int active = __activemask();
    int lane = threadIdx.x & 31;
    int leader = __ffs(active) - 1;
    int warp_res = 0;
    if (lane == leader) warp_res = atomicAdd(ctr, __popc(active));
    warp_res = __shfl_sync(active, warp_res, leader);      // every lane of `active` executes it
    return warp_res + __popc(active & ((1u << lane) - 1));
}

__global__ void filter_positive(const float* __restrict__ in, float* __restrict__ out, int* __restrict__ nout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = in[i];
        if (v > 0.0f) out[atomic_agg_inc(nout)] = v;
    }
}

void keep_positive(const float* d_in, float* d_out, int* d_count, int n) {
    filter_positive<<<(n + 255) / 256, 256>>>(d_in, d_out, d_count, n);
}
