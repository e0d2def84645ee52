// A size_t element count indexed with a 32-bit int.
__global__ void copy_big(const float* in, float* out, size_t n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // expect: overflow
    if (i < n) out[i] = in[i];
}
