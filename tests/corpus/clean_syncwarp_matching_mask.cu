// expect: none
// The same swap with the mask of the lanes that take the branch, and default-mask __syncwarp
// only where the whole warp runs it.
__global__ void pair_swap_masked(int* vals, int total) {
    __shared__ int buf[128];
    unsigned t = threadIdx.x;
    unsigned gid = blockIdx.x * 128 + t;
    buf[t] = gid < total ? vals[gid] : 0;
    __syncwarp();
    if ((t & 1) == 0) {
        int a = buf[t];
        buf[t] = buf[t + 1];
        buf[t + 1] = a;
        __syncwarp(0x55555555u);
    }
    __syncwarp();
    if (t < 32) {
        buf[t] += 1;
        __syncwarp();
    }
    if (gid < total) vals[gid] = buf[t];
}

void swap_pairs_masked(int* d_vals, int total) {
    pair_swap_masked<<<(total + 127) / 128, 128>>>(d_vals, total);
}
