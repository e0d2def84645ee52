// expect: none
// Warp-shuffle reduction: full mask, every lane participates; warp 0 finishes the block.
__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

__global__ void block_sum_shfl(const float* in, float* out, int n) {
    __shared__ float partial[32];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    float v = i < n ? in[i] : 0.0f;
    v = warp_sum(v);
    int lane = tid % 32, warp = tid / 32;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? partial[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) out[blockIdx.x] = v;
    }
}
