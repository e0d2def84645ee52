// A work loop whose trip count comes from per-thread data, with a barrier inside.
__global__ void drain(const int* counts, float* acc) {
    __shared__ float s[256];
    int left = counts[blockIdx.x * blockDim.x + threadIdx.x];
    s[threadIdx.x] = 0.0f;
    while (left > 0) {
        s[threadIdx.x] += 1.0f;
        __syncthreads();  // expect: sync
        --left;
    }
    acc[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x];
}
