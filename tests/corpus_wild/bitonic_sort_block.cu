// expect: none
// Bitonic sort of 1024 keys per block in shared memory; each compare-exchange is done by the
// lower index of its pair, with a barrier after every step.
#include <cuda_runtime.h>

#define SORT_N 1024

__global__ void bitonic_sort_block(unsigned int* keys) {
    __shared__ unsigned int s[SORT_N];
    unsigned int tid = threadIdx.x;
    unsigned int* seg = keys + blockIdx.x * SORT_N;
    s[tid] = seg[tid];
    __syncthreads();
    for (unsigned int k = 2; k <= SORT_N; k <<= 1) {
        for (unsigned int j = k >> 1; j > 0; j >>= 1) {
            unsigned int ixj = tid ^ j;
            if (ixj > tid) {
                unsigned int a = s[tid], b = s[ixj];
                bool ascending = (tid & k) == 0;
                if ((a > b) == ascending) {
                    s[tid] = b;
                    s[ixj] = a;
                }
            }
            __syncthreads();
        }
    }
    seg[tid] = s[tid];
}

void sort_segments(unsigned int* d_keys, int segments) {
    bitonic_sort_block<<<segments, SORT_N>>>(d_keys);
}
