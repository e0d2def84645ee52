// expect: none
// Per-block byte histogram: packed reads of four bytes per thread, shared atomics, a barrier,
// then the merge.
#define BINS 256
__global__ void histo_bytes(const unsigned int* packed, unsigned int* hist, int words) {
    __shared__ unsigned int s_hist[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) s_hist[b] = 0;
    __syncthreads();
    for (int w = blockIdx.x * blockDim.x + threadIdx.x; w < words; w += blockDim.x * gridDim.x) {
        unsigned int v = packed[w];
        atomicAdd(&s_hist[v & 0xFF], 1);
        atomicAdd(&s_hist[(v >> 8) & 0xFF], 1);
        atomicAdd(&s_hist[(v >> 16) & 0xFF], 1);
        atomicAdd(&s_hist[v >> 24], 1);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        atomicAdd(&hist[b], s_hist[b]);
}

void launch(const unsigned int* packed, unsigned int* hist, int words) {
    histo_bytes<<<120, 192>>>(packed, hist, words);
}
