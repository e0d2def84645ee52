// Bitonic merge written pair by pair: thread t compares element i = 2j*(t/j) + t%j with i + j.
// For j < 32 the lanes of a warp split into groups 2j words apart and meet in the same banks.
__global__ void bitonic_pairs(float* data) {
    __shared__ float s[512];
    int t = threadIdx.x;
    s[t] = data[blockIdx.x * 512 + t];
    s[t + 256] = data[blockIdx.x * 512 + t + 256];
    for (int k = 2; k <= 512; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            __syncthreads();
            int i = 2 * j * (t / j) + t % j;
            bool up = (i & k) == 0;
            float a = s[i], b = s[i + j];  // expect: bank-conflict
            if ((a > b) == up) {
                s[i] = b;  // expect: bank-conflict
                s[i + j] = a;  // expect: bank-conflict
            }
        }
    }
    __syncthreads();
    data[blockIdx.x * 512 + t] = s[t];
    data[blockIdx.x * 512 + t + 256] = s[t + 256];
}

void launch(float* data, int blocks) {
    bitonic_pairs<<<blocks, 256>>>(data);
}
