// expect: none
// The same comparisons with float literals, a double compared on purpose, and integer compares.
__global__ void leaky_relu_f(const float* src, float* dst, const double* ref, int* flags, int count) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= count) return;
    float val = src[idx];
    dst[idx] = (val >= 0.0f) ? val : 0.01f * val;
    double r = ref[idx];
    flags[idx] = (r > 0.5) + (idx < 1024);
}
