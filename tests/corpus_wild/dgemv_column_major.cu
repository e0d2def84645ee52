// expect: none
// y = alpha*A*x + beta*y in double precision, A column-major (BLAS layout), one thread per row.
#include <cstddef>
#include <cuda_runtime.h>

const int kM = 8192;
const int kN = 8192;

__global__ void dgemv_n(int m, int n, double alpha, const double* __restrict__ A, int lda,
                        const double* __restrict__ x, double beta, double* __restrict__ y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    double acc = 0.0;
    for (int j = 0; j < n; ++j)
        acc += A[row + (size_t)j * lda] * x[j];     // column-major: consecutive rows are adjacent
    y[row] = alpha * acc + (beta == 0.0 ? 0.0 : beta * y[row]);
}

void gemv(const double* dA, const double* dx, double* dy) {
    dgemv_n<<<(kM + 127) / 128, 128>>>(kM, kN, 1.0, dA, kM, dx, 0.0, dy);
}
