// The index is 64-bit, but the product is computed in 32 bits first.
__global__ void scale_huge(float* x, float a, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;  // expect: overflow
    if (i < n) x[i] *= a;
}
