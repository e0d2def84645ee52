// Up-sweep written as a while loop with the barrier at the top of each level; thread 0 clears
// the last element after the loop, when only it was active in the last level.
#define N 256
__global__ void upsweep_clear(float* data) {
    __shared__ float s[N];
    int t = threadIdx.x;
    s[2 * t] = data[blockIdx.x * N + 2 * t];
    s[2 * t + 1] = data[blockIdx.x * N + 2 * t + 1];
    int offset = 1;
    int d = N / 2;
    while (d > 0) {
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1;
            int bi = offset * (2 * t + 2) - 1;
            s[bi] += s[ai];  // expect: bank-conflict
        }
        offset <<= 1;
        d >>= 1;
    }
    if (t == 0) s[N - 1] = 0.0f;
    __syncthreads();
    data[blockIdx.x * N + 2 * t] = s[2 * t];
    data[blockIdx.x * N + 2 * t + 1] = s[2 * t + 1];
}

void launch(float* data, int blocks) {
    upsweep_clear<<<blocks, N / 2>>>(data);
}
