// Grid-stride loop with an int counter over a 64-bit length.
__global__ void fill_big(float* out, float v, long long n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {  // expect: overflow
        out[i] = v;
    }
}
