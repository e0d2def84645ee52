// Two passes over a vector in one block: the first sums it under `i < n`, the second scales it
// under `i <= n` and writes one element past the end.
#include <cuda_runtime.h>

__global__ void normalize_small(float* v, int n) {
    __shared__ float total;
    if (threadIdx.x == 0) total = 0.0f;
    __syncthreads();
    float mine = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) mine += v[i];
    atomicAdd(&total, mine);
    __syncthreads();
    const float inv = 1.0f / total;
    for (int i = threadIdx.x; i <= n; i += blockDim.x) v[i] *= inv;  // expect: DICE-X002
}

void normalize(float* v, int n) {
    normalize_small<<<1, 512>>>(v, n);
}
