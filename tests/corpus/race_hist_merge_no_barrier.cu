// Shared histogram written out per block without waiting for the other threads' atomics.
#define BINS 64
__global__ void histo64(const unsigned char* data, unsigned int* partial, int n) {
    __shared__ unsigned int s_hist[BINS];
    int tid = threadIdx.x;
    if (tid < BINS) s_hist[tid] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&s_hist[data[i] >> 2], 1u);
    if (tid < BINS) partial[blockIdx.x * BINS + tid] = s_hist[tid];  // expect: race
}

void launch(const unsigned char* data, unsigned int* partial, int n) {
    histo64<<<240, 256>>>(data, partial, n);
}
