// Per-channel bias on an NCHW tensor of 2^32 elements; the offset is flattened in int.
#define N 16
#define C 64
#define H 1024
#define W 4096
__global__ void add_channel_bias(float* x, const float* bias) {
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    int h = blockIdx.y;
    int n = blockIdx.z / C;
    int c = blockIdx.z % C;
    if (w < W) {
        int off = ((n * C + c) * H + h) * W + w;  // expect: overflow
        x[off] += bias[c];
    }
}

void launch(float* x, const float* bias) {
    dim3 grid(W / 256, H, N * C);
    add_channel_bias<<<grid, 256>>>(x, bias);
}
