// Shared histogram incremented without atomics.
__global__ void histogram_racy(const unsigned char* in, unsigned int* bins, int n) {
    __shared__ unsigned int local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = in[i];
    local[b] += 1;  // expect: race
    __syncthreads();
    atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
