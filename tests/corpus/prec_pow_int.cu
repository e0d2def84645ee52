// pow(float, int) resolves to the double overload.
__global__ void squares(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = pow(x[i], 2);  // expect: precision
}
