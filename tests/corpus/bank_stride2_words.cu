// Stride-2 shared indexing: lanes t and t+16 share a bank (2-way). Only even elements are read,
// so no neighbouring load lets the compiler widen it (see clean_adjacent_pair_shared.cu).
__global__ void evens(const float* in, float* out) {
    __shared__ float s[512];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 512 + tid];
    s[tid + 256] = in[blockIdx.x * 512 + tid + 256];
    __syncthreads();
    out[blockIdx.x * 256 + tid] = s[2 * tid];  // expect: bank-conflict
}
