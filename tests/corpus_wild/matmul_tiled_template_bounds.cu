// expect: none
// Tiled matrix multiply for any width: out-of-range tile elements load as zero, barriers on
// both sides of the inner product, the tile size a template parameter.
#include <cuda_runtime.h>

template <int TILE = 16>
__global__ void matmul_tiled_bounds(const float* M, const float* N, float* P, int width) {
    __shared__ float Mds[TILE][TILE];
    __shared__ float Nds[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float p = 0.0f;
    for (int ph = 0; ph < (width + TILE - 1) / TILE; ++ph) {
        int mc = ph * TILE + threadIdx.x;
        int nr = ph * TILE + threadIdx.y;
        Mds[threadIdx.y][threadIdx.x] = (row < width && mc < width) ? M[row * width + mc] : 0.0f;
        Nds[threadIdx.y][threadIdx.x] = (nr < width && col < width) ? N[nr * width + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) p += Mds[threadIdx.y][k] * Nds[k][threadIdx.x];
        __syncthreads();
    }
    if (row < width && col < width) P[row * width + col] = p;
}

void matmul_any(const float* dM, const float* dN, float* dP, int width) {
    dim3 block(16, 16);
    dim3 grid((width + 15) / 16, (width + 15) / 16);
    matmul_tiled_bounds<16><<<grid, block>>>(dM, dN, dP, width);
}
