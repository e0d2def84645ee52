// expect: none
// Row softmax, one warp per row, fp16 in and out with float arithmetic in between.
#include <cuda_fp16.h>
#include <math.h>
#include <cuda_runtime.h>

__global__ void softmax_rows_half(const __half* __restrict__ x, __half* __restrict__ y, int rows, int cols) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;                  // a whole warp leaves; no block barrier follows
    const __half* xr = x + (size_t)row * cols;
    __half* yr = y + (size_t)row * cols;
    float m = -INFINITY;
    for (int c = lane; c < cols; c += 32) m = fmaxf(m, __half2float(xr[c]));
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float sum = 0.0f;
    for (int c = lane; c < cols; c += 32) sum += __expf(__half2float(xr[c]) - m);
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    float inv = 1.0f / sum;
    for (int c = lane; c < cols; c += 32) yr[c] = __float2half(__expf(__half2float(xr[c]) - m) * inv);
}

void softmax_half(const __half* d_x, __half* d_y, int rows, int cols) {
    softmax_rows_half<<<(rows + 3) / 4, 128>>>(d_x, d_y, rows, cols);
}
