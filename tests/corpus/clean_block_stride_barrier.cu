// expect: none
// A block-stride loop has a block-uniform trip count, so barriers inside are fine.
__global__ void chunked_scale(const float* in, float* out, int n) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    for (int base = 0; base < n; base += blockDim.x) {
        int i = base + tid;
        s[tid] = i < n ? in[i] : 0.0f;
        __syncthreads();
        float v = s[(tid + 1) % blockDim.x];
        __syncthreads();
        if (i < n) out[i] = v;
    }
}
