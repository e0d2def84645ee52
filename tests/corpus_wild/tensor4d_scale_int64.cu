// expect: none
// Per-channel scale of an NCHW tensor with 2^32 elements; the flattened offset is 64-bit from
// the first multiplication on.
#include <cuda_runtime.h>

constexpr int kBatch = 16;
constexpr int kChannels = 256;
constexpr int kHeight = 1024;
constexpr int kWidth = 1024;

__global__ void channel_scale_nchw(float* act, const float* scale, int C, int H, int W) {
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    int h = blockIdx.y;
    int nc = blockIdx.z;                      // n * C + c < 4096
    if (w >= W) return;
    long long offset = ((long long)nc * H + h) * W + w;
    act[offset] *= scale[nc % C];
}

void scale_channels(float* d_act, const float* d_scale) {
    dim3 grid(kWidth / 256, kHeight, kBatch * kChannels);
    channel_scale_nchw<<<grid, 256>>>(d_act, d_scale, kChannels, kHeight, kWidth);
}
