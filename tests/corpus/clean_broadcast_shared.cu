// expect: none
// One thread writes a shared scalar, everyone reads it after the barrier (a broadcast).
__global__ void normalize_rows(const float* x, float* y, int cols) {
    __shared__ float inv_norm;
    __shared__ float partial[256];
    const float* row = x + blockIdx.x * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += row[c] * row[c];
    partial[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int k = 0; k < blockDim.x; ++k) total += partial[k];
        inv_norm = rsqrtf(total + 1e-12f);
    }
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = row[c] * inv_norm;
}
