// Kogge-Stone inclusive scan of one section per block, updating the shared array in place.
#include <cuda_runtime.h>

#define SECTION_SIZE 512

__global__ void kogge_stone_scan(const float* X, float* Y, float* S, unsigned int n) {
    __shared__ float XY[SECTION_SIZE];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    XY[threadIdx.x] = (i < n) ? X[i] : 0.0f;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        // in place: thread t reads XY[t - stride] while thread t - stride may already overwrite it
        if (threadIdx.x >= stride) XY[threadIdx.x] += XY[threadIdx.x - stride];  // expect: race
    }
    if (i < n) Y[i] = XY[threadIdx.x];
    if (threadIdx.x == blockDim.x - 1) S[blockIdx.x] = XY[threadIdx.x];
}

void scan_sections(const float* dX, float* dY, float* dS, unsigned int n) {
    kogge_stone_scan<<<(n + SECTION_SIZE - 1) / SECTION_SIZE, SECTION_SIZE>>>(dX, dY, dS, n);
}
