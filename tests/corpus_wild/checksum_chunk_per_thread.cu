// Adler-style checksums of 64-byte chunks, one chunk per thread (a dedup tool's fingerprint pass).
#include <cuda_runtime.h>

#define BYTES_PER_THREAD 64

__global__ void chunk_checksums(const unsigned char* __restrict__ data, unsigned int* __restrict__ sums,
                                int nchunks) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= nchunks) return;
    unsigned int a = 1, b = 0;
    for (int k = 0; k < BYTES_PER_THREAD; ++k) {
        // each lane walks its own 64-byte chunk: one load instruction touches 32 bytes 64 apart
        a += data[gid * BYTES_PER_THREAD + k];  // expect: coalescing
        b += a;
    }
    sums[gid] = (b << 16) | (a & 0xffffu);
}

void fingerprint(const unsigned char* d_data, unsigned int* d_sums, int nchunks) {
    chunk_checksums<<<(nchunks + 127) / 128, 128>>>(d_data, d_sums, nchunks);
}
