// Per-thread counters laid out with a stride of 64 words.
__global__ void per_thread_rows(const int* in, int* out) {
    __shared__ int counts[32 * 64];
    int lane = threadIdx.x;
    for (int j = 0; j < 64; ++j) counts[lane * 64 + j] = 0;  // expect: bank-conflict
    __syncwarp();
    out[blockIdx.x * 32 + lane] = counts[lane * 64] + in[blockIdx.x * 32 + lane];  // expect: bank-conflict
}

void launch(const int* in, int* out, int blocks) {
    per_thread_rows<<<blocks, 32>>>(in, out);
}
