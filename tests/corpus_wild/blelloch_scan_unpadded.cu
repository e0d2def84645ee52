// Work-efficient (Blelloch) exclusive scan of 512 floats per block, written from the textbook
// description without the bank-conflict padding.
#include <cuda_runtime.h>

#define SCAN_THREADS 256
#define SCAN_ELEMS (2 * SCAN_THREADS)

__global__ void prescan_block(const float* g_in, float* g_out, float* g_block_sums) {
    __shared__ float temp[SCAN_ELEMS];
    int thid = threadIdx.x;
    const float* in = g_in + blockIdx.x * SCAN_ELEMS;
    float* out = g_out + blockIdx.x * SCAN_ELEMS;
    temp[thid] = in[thid];
    temp[thid + SCAN_THREADS] = in[thid + SCAN_THREADS];

    int offset = 1;
    for (int d = SCAN_ELEMS >> 1; d > 0; d >>= 1) {      // up-sweep (reduce)
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            // ai and bi step by 2*offset words per lane: 2- up to 16-way conflicts in unpadded temp
            temp[bi] += temp[ai];  // expect: bank-conflict
        }
        offset *= 2;
    }
    if (thid == 0) {
        g_block_sums[blockIdx.x] = temp[SCAN_ELEMS - 1];
        temp[SCAN_ELEMS - 1] = 0.0f;
    }
    for (int d = 1; d < SCAN_ELEMS; d *= 2) {            // down-sweep
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            // the down-sweep walks the same strided tree: the swap conflicts like the up-sweep
            float t = temp[ai]; temp[ai] = temp[bi]; temp[bi] += t;  // expect: bank-conflict
        }
    }
    __syncthreads();
    out[thid] = temp[thid];
    out[thid + SCAN_THREADS] = temp[thid + SCAN_THREADS];
}

void scan_blocks(const float* d_in, float* d_out, float* d_sums, int nblocks) {
    prescan_block<<<nblocks, SCAN_THREADS>>>(d_in, d_out, d_sums);
}
