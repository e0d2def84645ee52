// Min/max exchange between the two halves of each warp through shared memory.
#include <cuda_runtime.h>

__global__ void half_warp_minmax(float* data, int n) {
    __shared__ float s[256];
    int lane = threadIdx.x & 31;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? data[i] : 0.0f;
    __syncwarp();
    if (lane < 16) {
        float lo = s[threadIdx.x], hi = s[threadIdx.x + 16];
        s[threadIdx.x] = fminf(lo, hi);
        s[threadIdx.x + 16] = fmaxf(lo, hi);
        // full-mask __syncwarp executed by lanes 0-15 only: lanes 16-31 never arrive
        __syncwarp();  // expect: sync
    }
    __syncwarp();
    if (i < n) data[i] = s[threadIdx.x];
}

void minmax_pairs(float* d_data, int n) {
    half_warp_minmax<<<(n + 255) / 256, 256>>>(d_data, n);
}
