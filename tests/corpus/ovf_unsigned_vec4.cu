// Four elements per thread, counted in 32-bit unsigned against a 64-bit length.
__global__ void zero4(float* x, size_t n) {
    unsigned int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;  // expect: overflow
    for (int k = 0; k < 4; ++k)
        if (base + k < n) x[base + k] = 0.0f;
}
