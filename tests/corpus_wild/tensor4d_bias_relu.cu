// Fused bias + ReLU epilogue over an NCHW activation tensor, as a framework's inference path
// would write it after a convolution.
#include <cuda_runtime.h>

constexpr int kBatch = 16;
constexpr int kChannels = 256;
constexpr int kHeight = 1024;
constexpr int kWidth = 1024;    // 16 * 256 * 1024 * 1024 = 2^32 activations

__global__ void bias_relu_nchw(float* act, const float* bias, int N, int C, int H, int W) {
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    int h = blockIdx.y;
    int nc = blockIdx.z;
    int n = nc / C;
    int c = nc % C;
    if (w >= W || n >= N) return;
    // N*C*H*W is 2^32 at the launch below: the flattened offset wraps in 32-bit int
    int offset = ((n * C + c) * H + h) * W + w;  // expect: overflow
    float v = act[offset] + bias[c];
    act[offset] = v > 0.0f ? v : 0.0f;
}

void launch_bias_relu(float* act, const float* bias, cudaStream_t stream) {
    dim3 block(256);
    dim3 grid(kWidth / 256, kHeight, kBatch * kChannels);
    bias_relu_nchw<<<grid, block, 0, stream>>>(act, bias, kBatch, kChannels, kHeight, kWidth);
}
