// Block-wide scan of doubles: 1024 threads x 8 items staged twice (ping-pong) in dynamic shared
// memory, 128 KiB in all, sized with macros and a dim3 launch.
#include <cuda_runtime.h>

#define THREADS 1024
#define ITEMS 8

__global__ void block_scan_double(const double* in, double* out, long long n) {
    extern __shared__ double buf[];
    double* a = buf;
    double* b = buf + THREADS * ITEMS;
    const long long base = (long long)blockIdx.x * THREADS * ITEMS;
    for (int i = threadIdx.x; i < THREADS * ITEMS; i += THREADS)
        a[i] = base + i < n ? in[base + i] : 0.0;
    __syncthreads();
    for (int offset = 1; offset < THREADS * ITEMS; offset *= 2) {
        for (int i = threadIdx.x; i < THREADS * ITEMS; i += THREADS)
            b[i] = i >= offset ? a[i] + a[i - offset] : a[i];
        __syncthreads();
        double* t = a; a = b; b = t;
    }
    for (int i = threadIdx.x; i < THREADS * ITEMS; i += THREADS)
        if (base + i < n) out[base + i] = a[i];
}

void scan_blocks(const double* in, double* out, long long n) {
    const int smem = 2 * THREADS * ITEMS * sizeof(double);
    dim3 grid((unsigned)((n + THREADS * ITEMS - 1) / (THREADS * ITEMS)));
    block_scan_double<<<grid, THREADS, smem>>>(in, out, n);  // expect: DICE-M007
}
