// expect: none
// Warp 0 does extra warp-synchronous work between two block barriers.
__global__ void warp0_prefix(const int* in, int* out) {
    __shared__ int s[256];
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    if (warp == 0) {
        int v = s[lane];
        for (int o = 1; o < 32; o <<= 1) {
            int n = __shfl_up_sync(0xffffffff, v, o);
            if (lane >= o) v += n;
        }
        __syncwarp();
        s[lane] = v;
    }
    __syncthreads();
    out[blockIdx.x * 256 + tid] = s[tid];
}

void launch(const int* in, int* out, int blocks) {
    warp0_prefix<<<blocks, 256>>>(in, out);
}
