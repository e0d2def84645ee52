// expect: none
// Inside a divergent branch, the mask comes from __activemask().
__global__ void compact_count(const int* flags, int* counts, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && flags[i]) {
        unsigned mask = __activemask();
        int leader = __ffs(mask) - 1;
        int total = __popc(mask);
        if ((threadIdx.x & 31) == leader) atomicAdd(&counts[blockIdx.x], total);
        __syncwarp(mask);
    }
}
