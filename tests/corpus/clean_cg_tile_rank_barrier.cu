// expect: none
// The same tile sums with the block barrier outside the tile-dependent branch; a tile-wide sync
// inside a branch every thread of the tile takes is fine.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void tile_sums_ok(const int* v, int* out, int n) {
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
    __shared__ int partial[8];
    int g = blockIdx.x * blockDim.x + cta.thread_rank();
    int s = g < n ? v[g] : 0;
    for (int d = 16; d > 0; d >>= 1) s += tile.shfl_xor(s, d);
    if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = s;
    cta.sync();
    if (tile.meta_group_rank() == 0) {
        s = tile.thread_rank() < 8 ? partial[tile.thread_rank()] : 0;
        tile.sync();
        for (int d = 4; d > 0; d >>= 1) s += tile.shfl_down(s, d);
        if (tile.thread_rank() == 0) out[blockIdx.x] = s;
    }
    cta.sync();
}

void sums_ok(const int* d_v, int* d_out, int n) {
    tile_sums_ok<<<(n + 255) / 256, 256>>>(d_v, d_out, n);
}
