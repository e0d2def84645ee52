// exp on a float is the float overload, but the literal makes its argument double.
__global__ void softplus(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = logf(1.0f + expf(x[i])) + exp(x[i] * 2.0);  // expect: precision
}
