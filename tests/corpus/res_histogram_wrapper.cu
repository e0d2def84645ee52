// Per-block histograms of 32-bit keys into 16384 shared bins (64 KiB), sized by a host wrapper
// whose caller passes the bin count as a constant.
#include <cuda_runtime.h>

__global__ void block_histogram(const unsigned* keys, unsigned* hist, int n, int bins) {
    extern __shared__ unsigned local_bins[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local_bins[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local_bins[keys[i] % bins], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) atomicAdd(&hist[b], local_bins[b]);
}

static void histogram(const unsigned* keys, unsigned* hist, int n, int bins) {
    block_histogram<<<264, 512, bins * sizeof(unsigned)>>>(keys, hist, n, bins);  // expect: DICE-M007
}

void histogram_16k(const unsigned* keys, unsigned* hist, int n) {
    histogram(keys, hist, n, 16384);
}
