// A 120,000 x 40,000 matrix scaled in place; the sizes reach the kernel from host constants.
__global__ void scale_rows(float* m, const float* row_scale, int rows, int cols) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < cols) {
        int idx = row * cols + col;  // expect: overflow
        m[idx] *= row_scale[row];
    }
}

int run_host() {   // the program's driver (not `main`: the GPU harness supplies its own)
    const int kRows = 120000;
    const int kCols = 40000;
    float *m = nullptr, *s = nullptr;
    dim3 block(32, 8);
    dim3 grid((kCols + 31) / 32, (kRows + 7) / 8);
    scale_rows<<<grid, block>>>(m, s, kRows, kCols);
    return 0;
}
