// Naive batched SGEMM, one thread per output element: C[b] = A[b] * B[b].
#include <cuda_runtime.h>

#define BATCH_COUNT 64
#define MAT_M 8192
#define MAT_N 8192
#define MAT_K 64

__global__ void batched_sgemm_naive(const float* A, const float* B, float* C, int m, int n, int k) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    const float* Ab = A + b * m * k;
    const float* Bb = B + b * k * n;
    // 64 batches of 8192 x 8192 outputs = 2^32 floats: b * m * n wraps in int from batch 32 on
    float* Cb = C + b * m * n;  // expect: overflow
    if (row < m && col < n) {
        float acc = 0.0f;
        for (int i = 0; i < k; ++i)
            acc += Ab[row * k + i] * Bb[i * n + col];
        Cb[row * n + col] = acc;
    }
}

void run_batched_gemm(const float* dA, const float* dB, float* dC) {
    dim3 block(32, 8);
    dim3 grid(MAT_N / 32, MAT_M / 8, BATCH_COUNT);
    batched_sgemm_naive<<<grid, block>>>(dA, dB, dC, MAT_M, MAT_N, MAT_K);
}
