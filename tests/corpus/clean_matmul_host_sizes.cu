// expect: none
// Tiled SGEMM for 4096 x 4096 matrices: row * n in int stays below 2^31 (16.7 million).
#define TILE 16
__global__ void sgemm(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

int main() {
    const int n = 4096;
    float *a = nullptr, *b = nullptr, *c = nullptr;
    dim3 block(TILE, TILE);
    dim3 grid(n / TILE, n / TILE);
    sgemm<<<grid, block>>>(a, b, c, n);
    return 0;
}
