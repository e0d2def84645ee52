// Byte histogram with per-block privatisation in shared memory, merged into the global histogram.
#include <cuda_runtime.h>

#define NUM_BINS 256

__global__ void histogram_privatized(const unsigned char* __restrict__ data, unsigned int* __restrict__ hist, int n) {
    __shared__ unsigned int local_hist[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) local_hist[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local_hist[data[i]], 1u);
    // no barrier before the merge: a bin is read while other threads' atomics on it may be pending
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        atomicAdd(&hist[b], local_hist[b]);  // expect: race
}

void byte_histogram(const unsigned char* d_data, unsigned int* d_hist, int n, int sm_count) {
    histogram_privatized<<<sm_count * 4, 256>>>(d_data, d_hist, n);
}
