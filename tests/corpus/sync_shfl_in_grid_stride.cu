// A full-mask shuffle inside a grid-stride loop: in the tail, some lanes have left the loop.
__global__ void pair_sums(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float v = x[i];
        v += __shfl_xor_sync(0xffffffff, v, 1);  // expect: sync
        y[i] = v;
    }
}
