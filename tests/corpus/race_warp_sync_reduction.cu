// Legacy warp-synchronous tail without __syncwarp: lanes of one warp race on Volta and later.
__global__ void sum_warp_tail(const float* in, float* out) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (int st = 128; st > 32; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    if (tid < 32) {
        s[tid] += s[tid + 32];
        s[tid] += s[tid + 16];  // expect: race
        s[tid] += s[tid + 8];  // expect: race
        s[tid] += s[tid + 4];  // expect: race
        s[tid] += s[tid + 2];  // expect: race
        s[tid] += s[tid + 1];  // expect: race
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
