// expect: none
// Barriers under block-uniform conditions (blockIdx, parameters) are fine.
__global__ void maybe_smooth(const float* in, float* out, int n, int smooth) {
    __shared__ float s[258];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    float v = i < n ? in[i] : 0.0f;
    if (smooth) {
        s[tid + 1] = v;
        if (tid == 0) s[0] = 0.0f;
        if (tid == blockDim.x - 1) s[blockDim.x + 1] = 0.0f;
        __syncthreads();
        v = (s[tid] + s[tid + 1] + s[tid + 2]) / 3.0f;
    }
    if (blockIdx.x > 0) {
        __syncthreads();
    }
    if (i < n) out[i] = v;
}
