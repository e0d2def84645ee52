// Work-efficient (Blelloch) exclusive scan of 512 floats per block in unpadded shared memory:
// ai and bi stride by 2*offset words, so the tree's accesses pile into few banks.
#define N 512
__global__ void blelloch_scan(const float* in, float* out) {
    __shared__ float temp[N];
    int tid = threadIdx.x;
    int offset = 1;
    temp[2 * tid] = in[blockIdx.x * N + 2 * tid];
    temp[2 * tid + 1] = in[blockIdx.x * N + 2 * tid + 1];
    for (int d = N >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            temp[bi] += temp[ai];  // expect: bank-conflict
        }
        offset *= 2;
    }
    if (tid == 0) temp[N - 1] = 0;
    for (int d = 1; d < N; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            float t = temp[ai];  // expect: bank-conflict
            temp[ai] = temp[bi];  // expect: bank-conflict
            temp[bi] += t;  // expect: bank-conflict
        }
    }
    __syncthreads();
    out[blockIdx.x * N + 2 * tid] = temp[2 * tid];
    out[blockIdx.x * N + 2 * tid + 1] = temp[2 * tid + 1];
}

void launch(const float* in, float* out, int blocks) {
    blelloch_scan<<<blocks, N / 2>>>(in, out);
}
