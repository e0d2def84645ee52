// expect: none
// Literals passed to float functions are converted at compile time: no double arithmetic.
__global__ void clamp01(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], 0.0), 1.0);
}
