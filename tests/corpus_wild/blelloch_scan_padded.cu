// expect: none
// Work-efficient (Blelloch) exclusive scan of 512 floats per block with the conflict-free
// padding of the classic scan chapter: one pad word every 32 words.
#include <cuda_runtime.h>

#define NUM_BANKS 32
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)
#define SCAN_THREADS 256
#define SCAN_ELEMS (2 * SCAN_THREADS)

__global__ void prescan_padded(const float* g_in, float* g_out, float* g_block_sums) {
    __shared__ float temp[SCAN_ELEMS + SCAN_ELEMS / NUM_BANKS];
    int thid = threadIdx.x;
    const float* in = g_in + blockIdx.x * SCAN_ELEMS;
    float* out = g_out + blockIdx.x * SCAN_ELEMS;
    int ai = thid;
    int bi = thid + SCAN_ELEMS / 2;
    int bank_offset_a = CONFLICT_FREE_OFFSET(ai);
    int bank_offset_b = CONFLICT_FREE_OFFSET(bi);
    temp[ai + bank_offset_a] = in[ai];
    temp[bi + bank_offset_b] = in[bi];

    int offset = 1;
    for (int d = SCAN_ELEMS >> 1; d > 0; d >>= 1) {
        __syncthreads();                     // orders each level after the previous one
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            temp[b] += temp[a];
        }
        offset *= 2;
    }
    // the last up-sweep level ran on thread 0 alone, so it may clear the root without a barrier
    if (thid == 0) {
        int last = SCAN_ELEMS - 1 + CONFLICT_FREE_OFFSET(SCAN_ELEMS - 1);
        g_block_sums[blockIdx.x] = temp[last];
        temp[last] = 0.0f;
    }
    for (int d = 1; d < SCAN_ELEMS; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            float t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();
    out[ai] = temp[ai + bank_offset_a];
    out[bi] = temp[bi + bank_offset_b];
}

void scan_blocks_padded(const float* d_in, float* d_out, float* d_sums, int nblocks) {
    prescan_padded<<<nblocks, SCAN_THREADS>>>(d_in, d_out, d_sums);
}
