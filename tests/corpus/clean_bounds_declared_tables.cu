// Tables walked exactly to their declared extent: a constant-memory filter of TAPS + 1
// coefficients read with an inclusive bound, a shared tile read up to its size, a local window.
// expect: none
#include <cuda_runtime.h>

#define TAPS 16
constexpr int kTile = 128;

__constant__ float c_filter[TAPS + 1];

__global__ void smooth(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float tile[kTile + TAPS];
    const int base = blockIdx.x * kTile;
    for (int t = threadIdx.x; t < kTile + TAPS; t += blockDim.x)
        tile[t] = base + t < n ? x[base + t] : 0.0f;
    __syncthreads();
    float window[TAPS + 1];
    for (int k = 0; k <= TAPS; ++k) window[k] = tile[threadIdx.x + k];
    float acc = 0.0f;
    for (int k = 0; k <= TAPS; ++k) acc += c_filter[k] * window[k];
    if (base + threadIdx.x < n) y[base + threadIdx.x] = acc;
}

void run(const float* x, float* y, int n) {
    smooth<<<(n + kTile - 1) / kTile, kTile>>>(x, y, n);
}

// a loop past the table whose body tests the index first
__global__ void guarded_taps(const float* __restrict__ x, float* __restrict__ y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < 2 * TAPS; ++k)
        if (k <= TAPS) acc += c_filter[k] * x[i];
    y[i] = acc;
}

void run_guarded(const float* x, float* y) {
    guarded_taps<<<64, 256>>>(x, y, 64 * 256);
}
