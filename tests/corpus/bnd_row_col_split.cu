// A flat index split into row and column: the column stays below cols, the row does not.
__global__ void add_bias(float* y, const float* bias, int rows, int cols) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int r = idx / cols;
    int c = idx % cols;
    y[r * cols + c] += bias[c];  // expect: bounds
}

void launch_add_bias(float* y, const float* bias, int rows, int cols) {
    int total = rows * cols;
    int threads = 256;
    int blocks = (total + threads - 1) / threads;
    add_bias<<<blocks, threads>>>(y, bias, rows, cols);
}
