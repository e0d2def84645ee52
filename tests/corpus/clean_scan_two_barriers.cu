// expect: none
// Hillis-Steele scan done right: read, barrier, write, barrier.
__global__ void scan256(const float* in, float* out) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (int d = 1; d < 256; d *= 2) {
        float v = tid >= d ? s[tid - d] : 0.0f;
        __syncthreads();
        s[tid] += v;
        __syncthreads();
    }
    out[blockIdx.x * 256 + tid] = s[tid];
}

void launch(const float* in, float* out, int blocks) {
    scan256<<<blocks, 256>>>(in, out);
}
