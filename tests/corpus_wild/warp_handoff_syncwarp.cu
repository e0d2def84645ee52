// Warp-specialised filter: warp 0 scales the coefficients into shared memory, warp 1 applies them.
#include <cuda_runtime.h>

__global__ void staged_scale(const float* __restrict__ in, const float* __restrict__ coeffs,
                             float* __restrict__ out, int n) {
    __shared__ float stage[32];
    int warp = threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (warp == 0) stage[lane] = coeffs[lane] * 0.5f;
    __syncwarp();
    if (warp == 1) {
        // written by warp 0: __syncwarp orders the lanes of one warp only, not warp 0 against warp 1
        float c = stage[lane];  // expect: race
        int i = blockIdx.x * 32 + lane;
        if (i < n) out[i] = in[i] * c;
    }
}

void staged_filter(const float* d_in, const float* d_coeffs, float* d_out, int n) {
    staged_scale<<<(n + 31) / 32, 64>>>(d_in, d_coeffs, d_out, n);
}
