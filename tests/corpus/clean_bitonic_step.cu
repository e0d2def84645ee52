// expect: none
// Bitonic sort in shared memory: only the lower partner of each pair swaps.
__global__ void bitonic256(float* data) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    s[tid] = data[blockIdx.x * 256 + tid];
    __syncthreads();
    for (int k = 2; k <= 256; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            int partner = tid ^ j;
            if (partner > tid) {
                bool up = (tid & k) == 0;
                float a = s[tid], b = s[partner];
                if ((a > b) == up) {
                    s[tid] = b;
                    s[partner] = a;
                }
            }
            __syncthreads();
        }
    }
    data[blockIdx.x * 256 + tid] = s[tid];
}

void launch(float* data, int blocks) {
    bitonic256<<<blocks, 256>>>(data);
}
