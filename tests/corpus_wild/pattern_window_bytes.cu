// Counts, per 32-byte window, the positions that match a pattern (a DNA read filter). The text is
// staged through shared memory with coalesced loads, then each thread scans its own window.
#include <cuda_runtime.h>

#define MATCH_THREADS 128
#define WINDOW 32

__global__ void window_matches(const unsigned char* __restrict__ text, const unsigned char* __restrict__ pattern,
                               int* __restrict__ hits, int n) {
    __shared__ unsigned char win[MATCH_THREADS][WINDOW];
    unsigned char* flat = &win[0][0];
    int base = blockIdx.x * MATCH_THREADS * WINDOW;
    for (int i = threadIdx.x; i < MATCH_THREADS * WINDOW; i += MATCH_THREADS)
        flat[i] = (base + i < n) ? text[base + i] : 0;
    __syncthreads();
    int score = 0;
    for (int k = 0; k < WINDOW; ++k)
        // thread t reads byte k of its own 32-byte row: lanes are 8 words apart, 8-way conflicts
        score += (win[threadIdx.x][k] == pattern[k]);  // expect: bank-conflict
    hits[blockIdx.x * MATCH_THREADS + threadIdx.x] = score;
}

void match_windows(const unsigned char* d_text, const unsigned char* d_pattern, int* d_hits, int n) {
    int blocks = (n + MATCH_THREADS * WINDOW - 1) / (MATCH_THREADS * WINDOW);
    window_matches<<<blocks, MATCH_THREADS>>>(d_text, d_pattern, d_hits, n);
}
