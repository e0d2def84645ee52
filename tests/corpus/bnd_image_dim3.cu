// A 2-D image kernel on a dim3 grid rounded up on both axes, with no check of x or y.
__global__ void brighten(const unsigned char* in, unsigned char* out, int width, int height, int delta) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int v = in[y * width + x] + delta;  // expect: bounds
    out[y * width + x] = (unsigned char)(v > 255 ? 255 : v);
}

void launch_brighten(const unsigned char* in, unsigned char* out, int width, int height, int delta) {
    dim3 block(16, 16);
    dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    brighten<<<grid, block>>>(in, out, width, height, delta);
}
