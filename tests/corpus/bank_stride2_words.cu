// Stride-2 shared indexing: lanes t and t+16 share a bank (2-way).
__global__ void pairs(const float* in, float* out) {
    __shared__ float s[512];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 512 + tid];
    s[tid + 256] = in[blockIdx.x * 512 + tid + 256];
    __syncthreads();
    out[blockIdx.x * 256 + tid] = s[2 * tid] + s[2 * tid + 1];  // expect: bank-conflict
}
