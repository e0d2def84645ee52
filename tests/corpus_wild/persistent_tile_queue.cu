// expect: none
// Persistent blocks pull tiles from a global queue: thread 0 takes the next tile, a barrier
// publishes it, and every thread of the block sees the same tile, so the exit is block-uniform.
#include <cuda_runtime.h>

#define QUEUE_THREADS 256
const int kTiles = 65536;

__global__ void process_tiles(const float* __restrict__ in, float* __restrict__ out, int* __restrict__ next_tile,
                              int num_tiles) {
    __shared__ int s_tile;
    __shared__ float s_buf[QUEUE_THREADS];
    while (true) {
        if (threadIdx.x == 0) s_tile = atomicAdd(next_tile, 1);
        __syncthreads();
        int tile = s_tile;
        if (tile >= num_tiles) break;
        int i = tile * QUEUE_THREADS + threadIdx.x;
        s_buf[threadIdx.x] = in[i];
        __syncthreads();
        out[i] = 0.5f * (s_buf[threadIdx.x] + s_buf[(threadIdx.x + 1) % QUEUE_THREADS]);
        __syncthreads();                      // s_tile and s_buf are read before they are reused
    }
}

void run_queue(const float* d_in, float* d_out, int* d_counter, int sm_count) {
    process_tiles<<<sm_count * 2, QUEUE_THREADS>>>(d_in, d_out, d_counter, kTiles);
}
