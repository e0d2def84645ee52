// The barrier hides in a __device__ helper that is called under a divergent branch: the call
// is the defect (the helper is fine when every thread calls it), so it is reported there.
__device__ float block_sum_step(float* s, int tid) {
    __syncthreads();
    return s[tid] + s[0];
}

__global__ void guarded_helper(const float* in, float* out) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    if (tid % 2 == 0) {
        out[blockIdx.x * blockDim.x + tid] = block_sum_step(s, tid);  // expect: sync
    }
}
