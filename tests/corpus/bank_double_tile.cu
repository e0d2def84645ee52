// A 32x32 tile of doubles read by column: half-warps hit the same two banks.
__global__ void transpose_double(const double* in, double* out) {
    __shared__ double t[32][32];
    for (int r = threadIdx.y; r < 32; r += blockDim.y) t[r][threadIdx.x] = in[r * 32 + threadIdx.x];
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += blockDim.y) out[r * 32 + threadIdx.x] = t[threadIdx.x][r];  // expect: bank-conflict
}

void launch(const double* in, double* out) {
    transpose_double<<<1, dim3(32, 8)>>>(in, out);
}
