// pow(float, 1.5) with a double exponent runs in double.
__global__ void power_law(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = pow(v, 1.5);  // expect: precision
    }
}
