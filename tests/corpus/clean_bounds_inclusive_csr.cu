// CSR matrix-vector product and a row-pointer fill: row_ptr holds n + 1 entries, so its
// inclusive loop is right (other loops read row_ptr[i + 1]); a 1-based loop reads a[i - 1].
#include <cuda_runtime.h>

__global__ void csr_spmv(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                         const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < n; row += gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int j = row_ptr[row]; j < row_ptr[row + 1]; ++j) s += vals[j] * x[cols[j]];
        y[row] = s;
    }
}

__global__ void fill_row_ptr(int* row_ptr, const int* __restrict__ counts, int n) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    int acc = 0;
    for (int i = 0; i < n; ++i) {
        row_ptr[i] = acc;
        acc += counts[i];
        row_ptr[i + 1] = acc;
    }
    for (int i = 0; i <= n; ++i) row_ptr[i] = row_ptr[i];
}

__global__ void one_based(const float* __restrict__ a, float* __restrict__ out, int n) {
    float s = 0.0f;
    for (int i = 1; i <= n; ++i) s += a[i - 1];
    out[threadIdx.x] = s;
}

void spmv(const int* row_ptr, const int* cols, const float* vals, const float* x, float* y, int n, const int* counts,
          int* rp, float* out) {
    fill_row_ptr<<<1, 1>>>(rp, counts, n);
    csr_spmv<<<(n + 255) / 256, 256>>>(row_ptr, cols, vals, x, y, n);
    one_based<<<1, 32>>>(vals, out, n);
}
// expect: none
