// Even lanes swap with their odd neighbour through shared memory, then wait with a default
// (full-mask) __syncwarp inside the branch: the odd lanes never arrive.
__global__ void pair_swap(int* vals, int total) {
    __shared__ int buf[128];
    unsigned t = threadIdx.x;
    unsigned gid = blockIdx.x * 128 + t;
    buf[t] = gid < total ? vals[gid] : 0;
    __syncwarp();
    if ((t & 1) == 0) {
        int a = buf[t];
        buf[t] = buf[t + 1];
        buf[t + 1] = a;
        __syncwarp();  // expect: sync
    }
    if (gid < total) vals[gid] = buf[t];
}

void swap_pairs(int* d_vals, int total) {
    pair_swap<<<(total + 127) / 128, 128>>>(d_vals, total);
}
