// expect: none
// 3x3 box blur through a shared tile with a one-pixel halo, borders clamped.
#include <cuda_runtime.h>

#define BX 32
#define BY 8

__global__ void box_blur3x3(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
    __shared__ float tile[BY + 2][BX + 2];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * BX + tx;
    int y = blockIdx.y * BY + ty;
    int cx = min(x, width - 1), cy = min(y, height - 1);
    int xl = max(x - 1, 0), xr = min(x + 1, width - 1);
    int yu = max(y - 1, 0), yd = min(y + 1, height - 1);
    tile[ty + 1][tx + 1] = in[cy * width + cx];
    if (tx == 0) tile[ty + 1][0] = in[cy * width + xl];
    if (tx == BX - 1) tile[ty + 1][BX + 1] = in[cy * width + xr];
    if (ty == 0) tile[0][tx + 1] = in[yu * width + cx];
    if (ty == BY - 1) tile[BY + 1][tx + 1] = in[yd * width + cx];
    if (tx == 0 && ty == 0) tile[0][0] = in[yu * width + xl];
    if (tx == BX - 1 && ty == 0) tile[0][BX + 1] = in[yu * width + xr];
    if (tx == 0 && ty == BY - 1) tile[BY + 1][0] = in[yd * width + xl];
    if (tx == BX - 1 && ty == BY - 1) tile[BY + 1][BX + 1] = in[yd * width + xr];
    __syncthreads();                                  // reached by every thread of the block
    if (x < width && y < height) {
        float s = 0.0f;
        for (int dy = 0; dy < 3; ++dy)
            for (int dx = 0; dx < 3; ++dx) s += tile[ty + dy][tx + dx];
        out[y * width + x] = s * (1.0f / 9.0f);
    }
}

void blur(const float* d_in, float* d_out) {
    const int width = 3840, height = 2160;
    dim3 block(BX, BY);
    dim3 grid((width + BX - 1) / BX, (height + BY - 1) / BY);
    box_blur3x3<<<grid, block>>>(d_in, d_out, width, height);
}
