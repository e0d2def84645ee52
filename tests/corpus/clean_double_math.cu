// expect: none
// Double kernels call the double overloads on purpose; constant expressions fold at compile time.
__global__ void double_poly(const double* x, double* y, float* third, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = pow(x[i], 2) + 0.5 * sqrt(x[i]);
        third[i] = 1.0 / 3.0;
    }
}
