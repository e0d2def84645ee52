// Stream compaction: survivors are counted with atomicAdd on a shared counter, and thread 0
// publishes the count before the other threads' increments are guaranteed to have landed.
__global__ void count_positive(const float* in, int* counts, int n) {
    __shared__ int survivors;
    if (threadIdx.x == 0) survivors = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0.0f) atomicAdd(&survivors, 1);
    if (threadIdx.x == 0) counts[blockIdx.x] = survivors;  // expect: race
}

void launch(const float* in, int* counts, int n) {
    count_positive<<<(n + 127) / 128, 128>>>(in, counts, n);
}
