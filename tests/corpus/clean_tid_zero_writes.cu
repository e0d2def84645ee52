// expect: none
// Only thread 0 writes the shared slot; the others read after the barrier.
__global__ void block_max_index(const float* x, int* out, int n) {
    __shared__ int best[1];
    if (threadIdx.x == 0) {
        int b = 0;
        for (int i = 1; i < n; ++i) if (x[blockIdx.x * n + i] > x[blockIdx.x * n + b]) b = i;
        best[0] = b;
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = best[0];
}
