// Each block walks the input in chunks of its size, exchanging values through shared memory;
// the loop bound depends on the thread.
#include <cuda_runtime.h>

#define CHUNK 256

__global__ void neighbour_sums(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float buf[CHUNK];
    float acc = 0.0f;
    // trip count ceil((n - tid) / CHUNK) differs between threads when n % CHUNK != 0
    for (int i = threadIdx.x; i < n; i += CHUNK) {
        buf[threadIdx.x] = in[i];
        // reached one more time by the low threads only in the last, partial chunk
        __syncthreads();  // expect: sync
        acc += buf[(threadIdx.x + 1) % CHUNK];
        // the same divergent trip count for the barrier that protects buf's reuse
        __syncthreads();  // expect: sync
    }
    out[blockIdx.x * CHUNK + threadIdx.x] = acc;
}

void chunk_sums(const float* d_in, float* d_out, int n, int blocks) {
    neighbour_sums<<<blocks, CHUNK>>>(d_in, d_out, n);
}
