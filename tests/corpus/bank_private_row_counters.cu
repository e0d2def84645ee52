// Each thread counts 3-bit codes in its own row of 8 shared counters: rows are 8 words apart,
// so lanes 0, 4, 8, ... hit the same bank for the same code.
#define CODES 8
#define THREADS 128

__global__ void code_counts(const unsigned char* codes, int* per_block, int n) {
    __shared__ int rows[THREADS * CODES];
    for (int c = 0; c < CODES; ++c) rows[threadIdx.x * CODES + c] = 0;  // expect: bank-conflict
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < n; i += gridDim.x * THREADS) {
        int code = codes[i] & (CODES - 1);
        rows[threadIdx.x * CODES + code]++;  // expect: bank-conflict
    }
    __syncthreads();
    if (threadIdx.x < CODES) {
        int sum = 0;
        for (int r = 0; r < THREADS; ++r) sum += rows[r * CODES + threadIdx.x];
        per_block[blockIdx.x * CODES + threadIdx.x] = sum;
    }
}

void count_codes(const unsigned char* d_codes, int* d_counts, int n) {
    code_counts<<<64, THREADS>>>(d_codes, d_counts, n);
}
