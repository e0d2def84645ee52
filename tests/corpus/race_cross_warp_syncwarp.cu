// __syncwarp orders lanes of one warp only; the read comes from the next warp's element.
__global__ void rotate_by_warp(const float* x, float* y) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    s[tid] = x[blockIdx.x * 256 + tid];
    __syncwarp();
    y[blockIdx.x * 256 + tid] = s[(tid + 32) % 256];  // expect: race
}

void launch(const float* x, float* y, int blocks) {
    rotate_by_warp<<<blocks, 256>>>(x, y);
}
