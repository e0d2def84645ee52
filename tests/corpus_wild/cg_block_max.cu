// Block maximum with cooperative groups: warp tiles reduce with shuffles, warp 0 combines them.
#include <cooperative_groups.h>
#include <math.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void block_max(const float* __restrict__ in, float* __restrict__ out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    __shared__ float warp_max[8];
    int i = blockIdx.x * blockDim.x + block.thread_rank();
    float v = i < n ? in[i] : -INFINITY;
    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, warp.shfl_down(v, o));
    if (warp.thread_rank() == 0) warp_max[warp.meta_group_rank()] = v;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        v = warp.thread_rank() < 8 ? warp_max[warp.thread_rank()] : -INFINITY;
        for (int o = 4; o > 0; o /= 2) v = fmaxf(v, warp.shfl_down(v, o));
        // a block-wide barrier inside a branch only warp 0 takes: the other seven warps never arrive
        block.sync();  // expect: sync
        if (warp.thread_rank() == 0) out[blockIdx.x] = v;
    }
}

void max_per_block(const float* d_in, float* d_out, int n) {
    block_max<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
}
