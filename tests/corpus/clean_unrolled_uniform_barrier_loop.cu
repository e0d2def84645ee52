// expect: none
// A constant-trip loop with a barrier per step; the guard inside is thread-dependent, the loop is not.
__global__ void tree_max(const float* in, float* out) {
    __shared__ float s[64];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 64 + tid];
    __syncthreads();
    #pragma unroll
    for (int step = 32; step > 0; step >>= 1) {
        if (tid < step) s[tid] = fmaxf(s[tid], s[tid + step]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

void launch(const float* in, float* out, int blocks) {
    tree_max<<<blocks, 64>>>(in, out);
}
