// A lookup kernel staging a 4096-entry float4 table (64 KiB) in dynamic shared memory. The host
// sets the shared-memory carveout preference, which does not raise the per-block limit.
#include <cuda_runtime.h>

__global__ void table_lookup(const float4* __restrict__ table, const int* __restrict__ keys,
                             float4* __restrict__ out, int n) {
    extern __shared__ float4 staged[];
    for (int i = threadIdx.x; i < 4096; i += blockDim.x) staged[i] = table[i];
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = staged[keys[i] & 4095];
}

void lookup(const float4* table, const int* keys, float4* out, int n, cudaStream_t stream) {
    const size_t bytes = sizeof(float4) * 4096;
    cudaFuncSetAttribute(table_lookup, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    table_lookup<<<132 * 4, 256, bytes, stream>>>(table, keys, out, n);  // expect: DICE-M007
}
