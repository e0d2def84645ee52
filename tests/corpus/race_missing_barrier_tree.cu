// Shared-memory tree reduction with the barrier forgotten inside the loop.
__global__ void sum_no_barrier(const float* in, float* out, int n) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];  // expect: race
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
