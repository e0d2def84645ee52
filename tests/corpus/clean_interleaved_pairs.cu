// expect: none
// Interleaved complex data read as re/im pairs: together the two loads are dense.
__global__ void magnitude(const float* z, float* mag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float re = z[2 * i];
        float im = z[2 * i + 1];
        mag[i] = sqrtf(re * re + im * im);
    }
}
