// Two threads share each row of counters (threadIdx.x / 2) and update it with plain += :
// lost updates whenever both see the same code.
__global__ void pair_rows(const int* v, int* out, int n) {
    __shared__ int rows[64 * 9];
    int t = threadIdx.x;
    for (int c = 0; c < 9; ++c) rows[(t / 2) * 9 + c] = 0;
    __syncthreads();
    int i = blockIdx.x * 128 + t;
    if (i < n) rows[(t / 2) * 9 + (v[i] & 7)] += 1;  // expect: race
    __syncthreads();
    if (t < 64) out[blockIdx.x * 64 + t] = rows[t * 9];
}

void pair_counts(const int* d_v, int* d_out, int n) {
    pair_rows<<<(n + 127) / 128, 128>>>(d_v, d_out, n);
}
