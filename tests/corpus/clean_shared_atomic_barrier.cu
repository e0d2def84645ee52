// expect: none
// Shared atomics read back correctly: the counter is read after a barrier, and each thread's
// own slot, updated atomically by that thread alone, is read by the same thread.
__global__ void count_positive(const float* in, int* counts, int* own, int n) {
    __shared__ int survivors;
    __shared__ int per_thread[128];
    if (threadIdx.x == 0) survivors = 0;
    per_thread[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0.0f) {
        atomicAdd(&survivors, 1);
        atomicAdd(&per_thread[threadIdx.x], 1);
    }
    own[i] = per_thread[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) counts[blockIdx.x] = survivors;
}

void launch(const float* in, int* counts, int* own, int n) {
    count_positive<<<(n + 127) / 128, 128>>>(in, counts, own, n);
}
