// 1-D 7-point stencil with a shared-memory tile and halo, as in the introductory CUDA material.
#include <cuda_runtime.h>

#define RADIUS 3
#define STENCIL_BLOCK 256

__global__ void stencil_1d(const float* in, float* out, int n) {
    __shared__ float temp[STENCIL_BLOCK + 2 * RADIUS];
    int gindex = blockIdx.x * blockDim.x + threadIdx.x;
    int lindex = threadIdx.x + RADIUS;
    temp[lindex] = (gindex < n) ? in[gindex] : 0.0f;
    if (threadIdx.x < RADIUS) {
        temp[lindex - RADIUS] = (gindex >= RADIUS) ? in[gindex - RADIUS] : 0.0f;
        temp[lindex + STENCIL_BLOCK] = (gindex + STENCIL_BLOCK < n) ? in[gindex + STENCIL_BLOCK] : 0.0f;
    }
    float result = 0.0f;
    for (int offset = -RADIUS; offset <= RADIUS; ++offset)
        // no barrier after filling the tile: neighbours' elements and the halo may not be written yet
        result += temp[lindex + offset];  // expect: race
    if (gindex < n) out[gindex] = result;
}

void apply_stencil(const float* d_in, float* d_out, int n) {
    stencil_1d<<<(n + STENCIL_BLOCK - 1) / STENCIL_BLOCK, STENCIL_BLOCK>>>(d_in, d_out, n);
}
