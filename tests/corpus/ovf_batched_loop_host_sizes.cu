// Batched vector add: 4,096 batches of 2^20 floats, the batch offset computed in int from
// sizes the host passes in.
__global__ void batched_axpy(const float* x, float* y, float a, int batches, int batch_len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= batch_len) return;
    for (int b = 0; b < batches; ++b) {
        int off = b * batch_len + i;  // expect: overflow
        y[off] += a * x[off];
    }
}

int run_host() {   // the program's driver (not `main`: the GPU harness supplies its own)
    int batches = 4096;
    int batch_len = 1 << 20;
    float *x = nullptr, *y = nullptr;
    batched_axpy<<<batch_len / 256, 256>>>(x, y, 2.0f, batches, batch_len);
    return 0;
}
