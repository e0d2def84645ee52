// One Jacobi sweep for the 2-D Laplace equation, ported from Fortran loops (i outer, j inner).
#include <cuda_runtime.h>

#define NX 2048
#define NY 2048
#define IDX(i, j) ((i) * NY + (j))

__global__ void jacobi_sweep(const float* __restrict__ u, float* __restrict__ unew) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && i < NX - 1 && j > 0 && j < NY - 1)
        // i comes from threadIdx.x but is the slow index of IDX: lanes are NY floats apart
        unew[IDX(i, j)] = 0.25f * (u[IDX(i - 1, j)] + u[IDX(i + 1, j)] + u[IDX(i, j - 1)] + u[IDX(i, j + 1)]);  // expect: coalescing
}

void jacobi(float* d_u, float* d_unew, int iters) {
    dim3 block(32, 8);
    dim3 grid(NX / 32, NY / 8);
    for (int it = 0; it < iters; ++it) {
        jacobi_sweep<<<grid, block>>>(d_u, d_unew);
        float* t = d_u; d_u = d_unew; d_unew = t;
    }
}
