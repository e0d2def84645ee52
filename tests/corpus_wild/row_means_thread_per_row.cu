// Per-row mean of a row-major matrix, one thread per row (feature normalisation statistics).
#include <cuda_runtime.h>

const int kRows = 4096;
const int kCols = 4096;

__global__ void row_means(const float* A, float* mean, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; ++c)
            // consecutive threads own consecutive rows: a warp's 32 addresses are `cols` floats apart
            s += A[row * cols + c];  // expect: coalescing
        mean[row] = s / cols;
    }
}

void compute_row_means(const float* dA, float* dMean) {
    row_means<<<(kRows + 255) / 256, 256>>>(dA, dMean, kRows, kCols);
}
