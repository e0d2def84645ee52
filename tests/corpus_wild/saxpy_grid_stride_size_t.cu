// expect: none
// SAXPY over 3e9 elements with a 64-bit grid-stride loop.
#include <cstddef>
#include <cuda_runtime.h>

static const size_t kElems = 3000000000ull;   // 12 GB per vector

__global__ void saxpy_big(size_t n, float a, const float* __restrict__ x, float* __restrict__ y) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

void saxpy(const float* d_x, float* d_y, int sm_count) {
    saxpy_big<<<sm_count * 32, 256>>>(kElems, 2.0f, d_x, d_y);
}
