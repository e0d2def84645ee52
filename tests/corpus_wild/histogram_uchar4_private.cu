// expect: none
// Byte histogram with a per-block private copy in shared memory; input read as uchar4 so each
// lane loads 4 consecutive bytes. Barriers on both sides of the shared-memory atomics.
#include <cuda_runtime.h>

#define HIST_BINS 256
#define HIST_THREADS 256     // one thread per bin for the clear and the merge

__global__ void histogram_uchar4(const uchar4* __restrict__ data, unsigned int* __restrict__ hist, int n4) {
    __shared__ unsigned int s_hist[HIST_BINS];
    s_hist[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
        uchar4 v = data[i];
        atomicAdd(&s_hist[v.x], 1u);
        atomicAdd(&s_hist[v.y], 1u);
        atomicAdd(&s_hist[v.z], 1u);
        atomicAdd(&s_hist[v.w], 1u);
    }
    __syncthreads();
    unsigned int c = s_hist[threadIdx.x];
    if (c != 0) atomicAdd(&hist[threadIdx.x], c);
}

void byte_histogram4(const unsigned char* d_bytes, unsigned int* d_hist, int nbytes, int sm_count) {
    histogram_uchar4<<<sm_count * 8, HIST_THREADS>>>(reinterpret_cast<const uchar4*>(d_bytes), d_hist, nbytes / 4);
}
