// Horner evaluation walking a constant table from the top down: the numerator starts at the
// table's extent (one past its last coefficient); the denominator starts at the last one and is
// correct, as is a shared stack popped from its top index.
#include <cuda_runtime.h>

#define ORDER 6
constexpr int kStack = 32;

__constant__ float c_num[ORDER];
__constant__ float c_den[ORDER];

__global__ void rational(const float* __restrict__ x, float* __restrict__ y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    float p = 0.0f;
    for (int k = ORDER; k > 0; --k) p = p * v + c_num[k];  // expect: bounds
    float q = 0.0f;
    for (int k = ORDER - 1; k >= 0; k--) q = q * v + c_den[k];
    y[i] = p / (1.0f + fabsf(q));
}

__global__ void unwind(const int* __restrict__ frames, int* __restrict__ out) {
    __shared__ int stack[kStack];
    stack[threadIdx.x] = frames[blockIdx.x * kStack + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        int depth = 0;
        for (int s = kStack - 1; s >= 0; s -= 1) depth += stack[s];
        out[blockIdx.x] = depth;
    }
}

void run(const float* x, float* y, const int* frames, int* out) {
    rational<<<(1 << 20) / 256, 256>>>(x, y, 1 << 20);
    unwind<<<256, kStack>>>(frames, out);
}
