// Per-tile sums with cooperative groups (tiles of 16 threads); the first tiles finish the sum
// and call a block-wide barrier that the other tiles never reach.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void tile_sums(const int* v, int* out, int n) {
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(cta);
    __shared__ int partial[16];
    int g = blockIdx.x * blockDim.x + cta.thread_rank();
    int s = g < n ? v[g] : 0;
    for (int d = 8; d > 0; d >>= 1) s += tile.shfl_xor(s, d);
    if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = s;
    cta.sync();
    if (tile.meta_group_rank() < 2) {
        s = partial[cta.thread_rank()];
        cg::sync(cta);  // expect: sync
        if (cta.thread_rank() == 0) out[blockIdx.x] = s;
    }
}

__global__ void block_leader(int* out) {
    auto blk = cg::this_thread_block();
    if (blk.thread_rank() < 32) {
        out[blk.thread_rank()] = 0;
        blk.sync();  // expect: sync
    }
}

void sums(const int* d_v, int* d_out, int n) {
    tile_sums<<<(n + 255) / 256, 256>>>(d_v, d_out, n);
    block_leader<<<1, 256>>>(d_out);
}
