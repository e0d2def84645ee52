// expect: none
// Kogge-Stone inclusive scan of one section per block: each step reads into a register, waits
// for every thread, then writes, so no thread overwrites a value another still has to read.
#include <cuda_runtime.h>

#define SECTION_SIZE 512

__global__ void kogge_stone_scan_safe(const float* X, float* Y, unsigned int n) {
    __shared__ float XY[SECTION_SIZE];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    XY[threadIdx.x] = (i < n) ? X[i] : 0.0f;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        float temp = 0.0f;
        if (threadIdx.x >= stride) temp = XY[threadIdx.x] + XY[threadIdx.x - stride];
        __syncthreads();
        if (threadIdx.x >= stride) XY[threadIdx.x] = temp;
    }
    if (i < n) Y[i] = XY[threadIdx.x];        // a thread's own element: last written by itself
}

void scan_sections_safe(const float* dX, float* dY, unsigned int n) {
    kogge_stone_scan_safe<<<(n + SECTION_SIZE - 1) / SECTION_SIZE, SECTION_SIZE>>>(dX, dY, n);
}
