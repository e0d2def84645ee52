// Matmul tile reading Bs transposed: Bs[tx][k] walks a column of a 16x16 tile.
#define T 16
__global__ void matmul_bt(const float* A, const float* B, float* C, int n) {
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / T; ++t) {
        As[ty][tx] = A[row * n + t * T + tx];
        Bs[ty][tx] = B[(t * T + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[tx][k];  // expect: bank-conflict
        __syncthreads();
    }
    C[row * n + col] = acc;
}

void launch(const float* A, const float* B, float* C, int n) {
    matmul_bt<<<dim3(n / T, n / T), dim3(T, T)>>>(A, B, C, n);
}
