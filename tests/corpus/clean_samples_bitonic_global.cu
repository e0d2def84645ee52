// expect: none
// The classic global-memory bitonic step: each thread pairs with i ^ j; only the lower
// partner swaps.
__global__ void bitonic_sort_step(float* dev_values, int j, int k) {
    unsigned int i, ixj;
    i = threadIdx.x + blockDim.x * blockIdx.x;
    ixj = i ^ j;
    if (ixj > i) {
        if ((i & k) == 0) {
            if (dev_values[i] > dev_values[ixj]) {
                float temp = dev_values[i];
                dev_values[i] = dev_values[ixj];
                dev_values[ixj] = temp;
            }
        }
        if ((i & k) != 0) {
            if (dev_values[i] < dev_values[ixj]) {
                float temp = dev_values[i];
                dev_values[i] = dev_values[ixj];
                dev_values[ixj] = temp;
            }
        }
    }
}

#define THREADS 512
#define BLOCKS 32768
#define NUM_VALS (THREADS * BLOCKS)
void bitonic_sort(float* values) {
    dim3 blocks(BLOCKS, 1);
    dim3 threads(THREADS, 1);
    for (int k = 2; k <= NUM_VALS; k <<= 1)
        for (int j = k >> 1; j > 0; j = j >> 1)
            bitonic_sort_step<<<blocks, threads>>>(values, j, k);
}
