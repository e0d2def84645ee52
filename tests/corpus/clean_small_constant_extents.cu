// expect: none
// int indices are fine when the file's extents keep products below 2^31.
#define W 4096
#define H 4096
__global__ void blur_x(const float* in, float* out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x > 0 && x < W - 1 && y < H) {
        int idx = y * W + x;
        out[idx] = (in[idx - 1] + in[idx] + in[idx + 1]) * (1.0f / 3.0f);
    }
}
