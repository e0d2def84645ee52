// Column sums read consecutive columns per warp (coalesced); row sums, one thread per row, do not.
__global__ void column_sums(const float* m, float* sums, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r) acc += m[r * cols + col];
    sums[col] = acc;
}

__global__ void row_sums(const float* m, float* sums, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float acc = 0.0f;
    for (int c = 0; c < cols; ++c) acc += m[row * cols + c];  // expect: coalescing
    sums[row] = acc;
}
