// The index reaches memory through a pointer offset from a parameter.
__global__ void copy_rows(const float* __restrict__ src, float* __restrict__ dst, int row, int cols) {
    const float* in = src + (long long)row * cols;
    float* out = dst + (long long)row * cols;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    out[c] = in[c];  // expect: bounds
}

void launch_copy_rows(const float* src, float* dst, int row, int cols) {
    copy_rows<<<(cols + 127) / 128, 128>>>(src, dst, row, cols);
}
