// expect: none
// The same private rows padded to 9 words: each thread owns its row (no race), and the odd
// stride spreads a warp's counters over all banks.
#define CODES 8
#define ROW (CODES + 1)
#define THREADS 128

__global__ void code_counts_padded(const unsigned char* codes, int* per_block, int n) {
    __shared__ int rows[THREADS * ROW];
    for (int c = 0; c < CODES; ++c) rows[threadIdx.x * ROW + c] = 0;
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < n; i += gridDim.x * THREADS) {
        int code = codes[i] & (CODES - 1);
        rows[threadIdx.x * ROW + code] += 1;
    }
    __syncthreads();
    if (threadIdx.x < CODES) {
        int sum = 0;
        for (int r = 0; r < THREADS; ++r) sum += rows[r * ROW + threadIdx.x];
        per_block[blockIdx.x * CODES + threadIdx.x] = sum;
    }
}

void count_codes_padded(const unsigned char* d_codes, int* d_counts, int n) {
    code_counts_padded<<<64, THREADS>>>(d_codes, d_counts, n);
}
