// expect: none
// The same batched add with the batch offset widened first, and a small batched add whose
// int offset stays far below 2^31 for the sizes the host passes in.
__global__ void batched_axpy(const float* x, float* y, float a, int batches, int batch_len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= batch_len) return;
    for (int b = 0; b < batches; ++b) {
        long long off = (long long)b * batch_len + i;
        y[off] += a * x[off];
    }
}

__global__ void small_batched_axpy(const float* x, float* y, float a, int batches, int batch_len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= batch_len) return;
    for (int b = 0; b < batches; ++b) {
        int off = b * batch_len + i;
        y[off] += a * x[off];
    }
}

int main() {
    int batches = 4096;
    int batch_len = 1 << 20;
    float *x = nullptr, *y = nullptr;
    batched_axpy<<<batch_len / 256, 256>>>(x, y, 2.0f, batches, batch_len);
    small_batched_axpy<<<16, 256>>>(x, y, 2.0f, 64, 4096);
    return 0;
}
