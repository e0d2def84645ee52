// expect: none
// Two statements read s[2 * tid] and s[2 * tid + 1] (2 * tid even) with only a global store
// between them, which cannot alias `s`: ptxas issues one 8-byte load (LDS.64) as it does for
// one statement (clean_adjacent_pair_shared.cu), so the stride-2 words do not conflict.
__global__ void magnitudes(const float* in, float* out, float* re_out) {
    __shared__ float s[512];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 512 + tid];
    s[tid + 256] = in[blockIdx.x * 512 + tid + 256];
    __syncthreads();
    float re = s[2 * tid];
    re_out[blockIdx.x * 256 + tid] = re;
    float im = s[2 * tid + 1];
    out[blockIdx.x * 256 + tid] = re * re + im * im;
}
