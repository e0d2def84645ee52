// Tiled dot product: the barrier after the reads is missing, so the next tile's load
// overwrites shared memory other threads are still reading.
#define TILE 16
__global__ void matvec_tiles(const float* A, const float* x, float* y, int n) {
    __shared__ float xs[TILE];
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        if (threadIdx.x < TILE) xs[threadIdx.x] = x[t + threadIdx.x];  // expect: race
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += A[(t + k) * n + row] * xs[k];
    }
    y[row] = acc;
}

void launch(const float* A, const float* x, float* y, int n) {
    matvec_tiles<<<n / 128, 128>>>(A, x, y, n);
}
