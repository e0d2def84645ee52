// Naive transpose: the read is coalesced, the write strides by the matrix height.
__global__ void transpose_naive(const float* in, float* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[x * height + y] = in[y * width + x];  // expect: coalescing
    }
}

void launch(const float* in, float* out, int w, int h) {
    dim3 block(32, 8);
    dim3 grid(w / 32, h / 8);
    transpose_naive<<<grid, block>>>(in, out, w, h);
}
