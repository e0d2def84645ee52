// expect: none
// The same NCHW bias, with the offset widened before the first multiply, and a small tensor
// whose flattened int offset stays below 2^31.
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
        size_t off = (((size_t)n * C + c) * H + h) * W + w;
        x[off] += bias[c];
    }
}

__global__ void add_channel_bias_small(float* x, const float* bias, int channels, int height, int width) {
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    int h = blockIdx.y;
    int n = blockIdx.z / channels;
    int c = blockIdx.z % channels;
    if (w < width) {
        int off = ((n * channels + c) * height + h) * width + w;
        x[off] += bias[c];
    }
}

void launch(float* x, const float* bias) {
    dim3 grid(W / 256, H, N * C);
    add_channel_bias<<<grid, 256>>>(x, bias);
    dim3 small(1, 224, 8 * 64);
    add_channel_bias_small<<<small, 256>>>(x, bias, 64, 224, 224);
}
