// expect: none
// The same row scaling on a 12,000 x 4,000 matrix: 48 million elements fit an int index.
__global__ void scale_rows(float* m, const float* row_scale, int rows, int cols) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < cols) {
        int idx = row * cols + col;
        m[idx] *= row_scale[row];
    }
}

int main() {
    const int kRows = 12000;
    const int kCols = 4000;
    float *m = nullptr, *s = nullptr;
    dim3 block(32, 8);
    dim3 grid((kCols + 31) / 32, (kRows + 7) / 8);
    scale_rows<<<grid, block>>>(m, s, kRows, kCols);
    return 0;
}
