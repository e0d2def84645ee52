// expect: none
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// cooperative_groups block sync, called by every thread.
__global__ void cg_reverse(const int* in, int* out) {
    cg::thread_block block = cg::this_thread_block();
    __shared__ int s[256];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    block.sync();
    out[blockIdx.x * 256 + tid] = s[255 - tid];
}

void launch(const int* in, int* out, int blocks) {
    cg_reverse<<<blocks, 256>>>(in, out);
}
