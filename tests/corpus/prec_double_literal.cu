// Unsuffixed literals promote float math to double.
__global__ void saxpy_half_scale(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.5 * a * x[i] + y[i];  // expect: precision
}
