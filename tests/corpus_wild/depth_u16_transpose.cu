// Rotates a 16-bit depth image by transposing it (a camera pipeline's orientation fix).
#include <cuda_runtime.h>

__global__ void transpose_depth_u16(const unsigned short* in, unsigned short* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        // the store walks down a column: lanes with consecutive x write `height` elements apart
        out[x * height + y] = in[y * width + x];  // expect: coalescing
}

void rotate_depth(const unsigned short* d_in, unsigned short* d_out, int width, int height) {
    dim3 block(32, 8);
    dim3 grid((width + 31) / 32, (height + 7) / 8);
    transpose_depth_u16<<<grid, block>>>(d_in, d_out, width, height);
}
