// expect: none
// Explicit 2-D heat-equation step on a 4096 x 4096 grid, read straight from global memory.
#include <cuda_runtime.h>

#define GRID_X 4096
#define GRID_Y 4096

__global__ void heat_step(const float* __restrict__ T, float* __restrict__ Tn, float alpha) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= GRID_X - 1 || y >= GRID_Y - 1) return;
    int c = y * GRID_X + x;
    Tn[c] = T[c] + alpha * (T[c - 1] + T[c + 1] + T[c - GRID_X] + T[c + GRID_X] - 4.0f * T[c]);
}

void heat(float* d_T, float* d_Tn, int steps) {
    dim3 block(32, 8);
    dim3 grid(GRID_X / 32, GRID_Y / 8);
    for (int s = 0; s < steps; ++s) {
        heat_step<<<grid, block>>>(d_T, d_Tn, 0.2f);
        float* t = d_T; d_T = d_Tn; d_Tn = t;
    }
}
