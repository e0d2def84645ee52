// Per-block digit counts for one pass of an LSD radix sort; each thread keeps a private row of
// 16 counters in shared memory.
#include <cuda_runtime.h>

#define RADIX_BITS 4
#define RADIX (1 << RADIX_BITS)
#define SORT_THREADS 128
#define KEYS_PER_THREAD 8

__global__ void radix_digit_counts(const unsigned int* __restrict__ keys, unsigned int* __restrict__ block_counts,
                                   int n, int shift) {
    __shared__ unsigned int counts[SORT_THREADS * RADIX];
    int tid = threadIdx.x;
    // thread rows are 16 words long: the 32 lanes of a warp land in only two banks per step
    for (int d = 0; d < RADIX; ++d) counts[tid * RADIX + d] = 0;  // expect: bank-conflict
    int base = blockIdx.x * SORT_THREADS * KEYS_PER_THREAD;
    for (int k = 0; k < KEYS_PER_THREAD; ++k) {
        int i = base + k * SORT_THREADS + tid;
        if (i < n) {
            unsigned int digit = (keys[i] >> shift) & (RADIX - 1);
            // the same 16-word row stride: lanes with equal parity and equal digit share a bank
            counts[tid * RADIX + digit] += 1;  // expect: bank-conflict
        }
    }
    __syncthreads();
    if (tid < RADIX) {
        unsigned int total = 0;
        for (int t = 0; t < SORT_THREADS; ++t) total += counts[t * RADIX + tid];
        block_counts[blockIdx.x * RADIX + tid] = total;
    }
}

void count_digits(const unsigned int* d_keys, unsigned int* d_counts, int n, int pass) {
    int blocks = (n + SORT_THREADS * KEYS_PER_THREAD - 1) / (SORT_THREADS * KEYS_PER_THREAD);
    radix_digit_counts<<<blocks, SORT_THREADS>>>(d_keys, d_counts, n, pass * RADIX_BITS);
}
