// Tiled matrix multiply (square, width a multiple of the tile), with the barrier after the
// inner product left out.
#include <cuda_runtime.h>

#define TILE_WIDTH 16

__global__ void matmul_tiled(const float* M, const float* N, float* P, int width) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = by * TILE_WIDTH + ty;
    int col = bx * TILE_WIDTH + tx;
    float pvalue = 0.0f;
    for (int ph = 0; ph < width / TILE_WIDTH; ++ph) {
        // next phase overwrites the tiles while slower threads may still read them (no trailing barrier)
        Mds[ty][tx] = M[row * width + ph * TILE_WIDTH + tx];  // expect: race
        Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * width + col];  // expect: race
        __syncthreads();
        for (int k = 0; k < TILE_WIDTH; ++k)
            pvalue += Mds[ty][k] * Nds[k][tx];
    }
    P[row * width + col] = pvalue;
}

void matmul(const float* dM, const float* dN, float* dP, int width) {
    dim3 block(TILE_WIDTH, TILE_WIDTH);
    dim3 grid(width / TILE_WIDTH, width / TILE_WIDTH);
    matmul_tiled<<<grid, block>>>(dM, dN, dP, width);
}
