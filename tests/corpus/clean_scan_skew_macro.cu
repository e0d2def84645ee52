// expect: none
// Up-sweep/down-sweep scan of 256 ints per block whose shared indices go through a skewing
// function-like macro (one pad word per 32): every level is separated by a barrier.
#define SKEW(x) ((x) + ((x) >> 5))
#define TPB 128
#define SPAN (2 * TPB)

__global__ void skewed_scan(const int* src, int* dst) {
    __shared__ int sh[SPAN + SPAN / 32];
    int t = threadIdx.x;
    const int* in = src + blockIdx.x * SPAN;
    sh[SKEW(t)] = in[t];
    sh[SKEW(t + TPB)] = in[t + TPB];
    int stride = 1;
    for (int active = TPB; active > 0; active >>= 1) {
        __syncthreads();
        if (t < active) {
            int lo = stride * (2 * t + 1) - 1;
            int hi = stride * (2 * t + 2) - 1;
            sh[SKEW(hi)] += sh[SKEW(lo)];
        }
        stride <<= 1;
    }
    if (t == 0) sh[SKEW(SPAN - 1)] = 0;
    for (int active = 1; active < SPAN; active <<= 1) {
        stride >>= 1;
        __syncthreads();
        if (t < active) {
            int lo = stride * (2 * t + 1) - 1;
            int hi = stride * (2 * t + 2) - 1;
            int keep = sh[SKEW(lo)];
            sh[SKEW(lo)] = sh[SKEW(hi)];
            sh[SKEW(hi)] += keep;
        }
    }
    __syncthreads();
    dst[blockIdx.x * SPAN + t] = sh[SKEW(t)];
    dst[blockIdx.x * SPAN + t + TPB] = sh[SKEW(t + TPB)];
}

void scan_skewed(const int* d_src, int* d_dst, int blocks) {
    skewed_scan<<<blocks, TPB>>>(d_src, d_dst);
}
