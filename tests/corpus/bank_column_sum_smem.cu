// Threads sum columns of a shared 32x32 tile: every lane hits the same bank.
__global__ void tile_column_sums(const float* in, float* out) {
    __shared__ float t[32][32];
    for (int r = 0; r < 32; ++r) t[r][threadIdx.x] = in[blockIdx.x * 1024 + r * 32 + threadIdx.x];
    __syncthreads();
    float acc = 0.0f;
    for (int c = 0; c < 32; ++c) acc += t[threadIdx.x][c];  // expect: bank-conflict
    out[blockIdx.x * 32 + threadIdx.x] = acc;
}

void launch(const float* in, float* out, int blocks) {
    tile_column_sums<<<blocks, 32>>>(in, out);
}
