// expect: none
// RGBA8 to 8-bit luma for a 4K frame; one uchar4 per lane, weights as float literals.
#include <cuda_runtime.h>

const int kFrameWidth = 3840;
const int kFrameHeight = 2160;    // 8.3 M pixels: int indices are ample

__global__ void rgba_to_luma(const uchar4* __restrict__ rgba, unsigned char* __restrict__ luma, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int idx = y * width + x;
    uchar4 p = rgba[idx];
    float l = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
    luma[idx] = (unsigned char)__float2int_rn(__saturatef(l * (1.0f / 255.0f)) * 255.0f);
}

void to_luma(const uchar4* d_rgba, unsigned char* d_luma) {
    dim3 block(32, 8);
    dim3 grid((kFrameWidth + 31) / 32, (kFrameHeight + 7) / 8);
    rgba_to_luma<<<grid, block>>>(d_rgba, d_luma, kFrameWidth, kFrameHeight);
}
