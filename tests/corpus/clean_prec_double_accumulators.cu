// Sums of double data kept in double, a float sum of float data, an explicit narrowing the code
// asks for, and a float accumulator scaled by a double literal outside any loop.
#include <cuda_runtime.h>

__global__ void row_stats(const double* __restrict__ x, const float* __restrict__ y, double* __restrict__ sums,
                          float* __restrict__ fsums, float* __restrict__ narrowed, int cols) {
    const long long row = blockIdx.x;
    double acc = 0.0;
    float facc = 0.0f;
    float nacc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        acc += x[row * cols + c];
        facc += y[row * cols + c];
        nacc += (float)x[row * cols + c];
    }
    facc *= 0.5f;
    sums[row * blockDim.x + threadIdx.x] = acc;
    fsums[row * blockDim.x + threadIdx.x] = facc;
    narrowed[row * blockDim.x + threadIdx.x] = nacc;
}

void stats(const double* x, const float* y, double* sums, float* fsums, float* narrowed, int rows, int cols) {
    row_stats<<<rows, 128>>>(x, y, sums, fsums, narrowed, cols);
}
// expect: none
