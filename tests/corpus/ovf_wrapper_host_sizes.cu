// Sizes from main, through a host wrapper, into the kernel.
__global__ void add_bias(float* m, const float* bias, int rows, int cols) {
    int r = blockIdx.y;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        int idx = r * cols + c;  // expect: overflow
        m[idx] += bias[c];
    }
}

void add_bias_launch(float* m, const float* bias, int rows, int cols) {
    dim3 grid(1, rows);
    add_bias<<<grid, 256>>>(m, bias, rows, cols);
}

int run_host() {   // the program's driver (not `main`: the GPU harness supplies its own)
    float *m = nullptr, *b = nullptr;
    add_bias_launch(m, b, 120000, 40000);
    return 0;
}
