// A 2-D stencil whose block was widened to 64 rows: each extent is allowed, their product is
// 2048 threads, which no GPU launches. The 1-D launch below stays within the limit.
#include <cuda_runtime.h>

#define TILE_X 32
#define TILE_Y 64

__global__ void sharpen(const float* __restrict__ img, float* __restrict__ out, int w, int h) {
    const int x = blockIdx.x * TILE_X + threadIdx.x;
    const int y = blockIdx.y * TILE_Y + threadIdx.y;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
    const float c = img[y * w + x];
    out[y * w + x] = 5.0f * c - img[y * w + x - 1] - img[y * w + x + 1] - img[(y - 1) * w + x]
                     - img[(y + 1) * w + x];
}

__global__ void scale(float* __restrict__ v, float s, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= s;
}

void run(const float* img, float* out) {
    const int w = 3840, h = 2160;
    dim3 block(TILE_X, TILE_Y);
    dim3 grid((w + TILE_X - 1) / TILE_X, (h + TILE_Y - 1) / TILE_Y);
    sharpen<<<grid, block>>>(img, out, w, h);  // expect: DICE-M008
    scale<<<(w * h + 1023) / 1024, 1024>>>(out, 0.5f, w * h);
}
