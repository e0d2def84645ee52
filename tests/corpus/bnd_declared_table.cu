// Lookup tables declared with a constant extent, walked one step too far: a constant-memory
// polynomial and a shared histogram's prefix.
#include <cuda_runtime.h>

#define DEGREE 8
constexpr int kBins = 64;

__constant__ float c_coeffs[DEGREE];

__global__ void poly_eval(const float* __restrict__ x, float* __restrict__ y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    float acc = 0.0f, p = 1.0f;
    for (int d = 0; d <= DEGREE; ++d) {  // expect: bounds
        acc += c_coeffs[d] * p;
        p *= v;
    }
    y[i] = acc;
}

__global__ void bin_prefix(const int* __restrict__ bins, int* __restrict__ prefix) {
    __shared__ int counts[kBins];
    if (threadIdx.x < kBins) counts[threadIdx.x] = bins[blockIdx.x * kBins + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        int running = 0;
        for (int b = 0; b < kBins + 1; ++b) {  // expect: bounds
            running += counts[b];
            prefix[blockIdx.x * (kBins + 1) + b] = running;
        }
    }
}

void run(const float* x, float* y, const int* bins, int* prefix) {
    poly_eval<<<(1 << 20) / 256, 256>>>(x, y, 1 << 20);
    bin_prefix<<<512, 64>>>(bins, prefix);
}
