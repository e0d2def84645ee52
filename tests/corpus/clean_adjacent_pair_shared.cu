// expect: none
// s[2 * tid] + s[2 * tid + 1] in one expression, 2 * tid even: ptxas issues one 8-byte load
// (LDS.64), two wavefronts per warp and no conflict (measured with ncu on the H200: 0 bank
// conflicts). Only the two 4-byte loads taken apart would conflict 2-way.
__global__ void pair_sums(const float* in, float* out) {
    __shared__ float s[512];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 512 + tid];
    s[tid + 256] = in[blockIdx.x * 512 + tid + 256];
    __syncthreads();
    out[blockIdx.x * 256 + tid] = s[2 * tid] + s[2 * tid + 1];
}
