// Shared histogram: bins filled with atomicAdd and merged into the global one with no barrier
// between, so a thread can read its bin while other threads still add to it.
__global__ void histogram256(const unsigned char* in, unsigned int* bins, int n) {
    __shared__ unsigned int local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[in[i]], 1u);
    atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);  // expect: race
}

void launch(const unsigned char* in, unsigned int* bins, int n) {
    histogram256<<<64, 256>>>(in, bins, n);
}
