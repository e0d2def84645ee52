// expect: none
// Shared histogram with atomics; bins initialized and flushed between barriers.
__global__ void histogram(const unsigned char* in, unsigned int* bins, int n) {
    __shared__ unsigned int local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[in[i]], 1u);
    __syncthreads();
    atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

void launch(const unsigned char* in, unsigned int* bins, int n) {
    histogram<<<64, 256>>>(in, bins, n);
}
