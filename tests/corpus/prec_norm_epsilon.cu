// A double epsilon inside a float norm: the whole sum is promoted.
__global__ void norms(const float* x, const float* y, float* r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) r[i] = sqrtf(x[i] * x[i] + y[i] * y[i] + 1e-12);  // expect: precision
}
