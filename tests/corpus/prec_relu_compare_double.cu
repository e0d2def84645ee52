// Leaky ReLU whose branch compares a float against an unsuffixed literal: the comparison runs in double.
__global__ void leaky_relu(const float* src, float* dst, int count) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= count) return;
    float val = src[idx];
    dst[idx] = (val >= 0.0) ? val : 0.01f * val;  // expect: precision
}

__global__ void mask_small(const float* w, unsigned char* keep, int count) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < count) keep[idx] = fabsf(w[idx]) < 1e-3;  // expect: precision
}
