// expect: none
// Grid-stride sum with cooperative groups: warp tiles reduce with cg::reduce, tile 0 combines the
// per-warp partials after a block barrier that every thread reaches.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void sum_cg(const float* __restrict__ in, float* __restrict__ out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    __shared__ float partial[32];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v += in[i];
    v = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = v;
    block.sync();
    if (tile.meta_group_rank() == 0) {         // a whole tile: its collectives stay converged
        v = tile.thread_rank() < tile.meta_group_size() ? partial[tile.thread_rank()] : 0.0f;
        v = cg::reduce(tile, v, cg::plus<float>());
        if (tile.thread_rank() == 0) atomicAdd(out, v);
    }
}

void device_sum(const float* d_in, float* d_out, int n, int sm_count) {
    sum_cg<<<sm_count * 4, 512>>>(d_in, d_out, n);
}
