// expect: none
// Grid-stride loop without barriers, size_t indices.
__global__ void axpy(const float* x, float* y, float a, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}
