// Per-(image, channel) statistics over NCHW planes: the plane's base offset is stored in a 64-bit
// variable, but the product is computed from 32-bit block coordinates and sizes first, and for
// 3072 images of 48 channels of 128 x 128 it passes 2^31 before the widening.
#include <cuda_runtime.h>

constexpr int kThreads = 128;

__global__ void plane_l2(const float* __restrict__ x, float* __restrict__ norms, int channels, int plane) {
    __shared__ float partial[kThreads];
    const int img = blockIdx.y;
    const int ch = blockIdx.x;
    const long long base = (img * channels + ch) * plane;  // expect: DICE-O002
    const long long row = (long long)(img * channels + ch) * plane;
    float acc = 0.0f;
    for (int i = threadIdx.x; i < plane; i += kThreads) acc += x[base + i] * x[row + i];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) norms[img * channels + ch] = sqrtf(partial[0]);
}

void run(const float* x, float* norms) {
    const int images = 3072, channels = 48, height = 128, width = 128;
    plane_l2<<<dim3(channels, images), kThreads>>>(x, norms, channels, height * width);
}
