// Each group of four threads shares one slot chosen through a function-like macro, and all four
// write it with no ordering: a write-write race on every slot.
#define GROUP_OF(t) ((t) >> 2)

__global__ void group_last(const float* vals, float* out, int n) {
    __shared__ float slot[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    slot[GROUP_OF(threadIdx.x)] = i < n ? vals[i] : 0.0f;  // expect: race
    __syncthreads();
    if (threadIdx.x < 64) out[blockIdx.x * 64 + threadIdx.x] = slot[threadIdx.x];
}

void last_of_groups(const float* d_vals, float* d_out, int n) {
    group_last<<<(n + 255) / 256, 256>>>(d_vals, d_out, n);
}
