// Divergence via early return: the tail block's out-of-range threads leave before the barrier.
__global__ void scale_tail(const float* in, float* out, int n) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    tile[threadIdx.x] = in[i];
    __syncthreads();  // expect: sync
    out[i] = tile[threadIdx.x] + tile[(threadIdx.x + 1) % blockDim.x];
}
