// expect: none
// Deliberate double accumulation of float data, and double kernels with double literals.
__global__ void sum_in_double(const float* x, double* out, int n) {
    double acc = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += (double)x[i] * 0.5;
    out[threadIdx.x] = acc;
}

__global__ void scale_double(double* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 0.5 * x[i] + 1.0;
}
