// Run-length pre-pass: every thread scans its own 32-element chunk of 16-bit symbols, so
// neighbouring lanes read 64 bytes apart.
#define CHUNK 32
__global__ void count_runs(const short* symbols, int* runs, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int begin = t * CHUNK;
    if (begin >= n) return;
    int count = 1;
    for (int k = 1; k < CHUNK; ++k)
        count += symbols[begin + k] != symbols[begin + k - 1];  // expect: coalescing
    runs[t] = count;
}
