// ReLU over an NCHW tensor of 2^32 elements with a grid-stride loop: the flat index and its
// bound are ints, built from the extents the host passes.
__global__ void relu_nchw(float* x, int N, int C, int H, int W) {
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < N * C * H * W;  // expect: overflow
         idx += blockDim.x * gridDim.x)
        x[idx] = x[idx] > 0.0f ? x[idx] : 0.0f;
}

void launch(float* x) {
    const int N = 16, C = 64, H = 2048, W = 2048;
    relu_nchw<<<132 * 16, 256>>>(x, N, C, H, W);
}
