// expect: none
// One warp per row: the row guard is warp-uniform, so full-mask shuffles inside it are fine.
__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}

__device__ float warp_add(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__global__ void softmax_rows(const float* x, float* y, int rows, int cols) {
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int row = blockIdx.x * (blockDim.x / 32) + warp;
    if (row < rows) {
        const float* xr = x + row * cols;
        float m = -INFINITY;
        for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
        m = warp_max(m);
        float s = 0.0f;
        for (int c = lane; c < cols; c += 32) s += expf(xr[c] - m);
        s = warp_add(s);
        for (int c = lane; c < cols; c += 32) y[row * cols + c] = expf(xr[c] - m) / s;
    }
}
