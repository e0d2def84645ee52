// A barrier inside a branch taken by half the block.
__global__ void half_block_barrier(const float* in, float* out, int n) {
    __shared__ float buf[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    buf[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (tid < 128) {
        buf[tid] += buf[tid + 128];
        __syncthreads();  // expect: sync
    }
    if (i < n) out[i] = buf[tid];
}
