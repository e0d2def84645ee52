// expect: none
// The same double tile padded to 33 columns: column reads spread over all banks.
__global__ void transpose_double_padded(const double* in, double* out) {
    __shared__ double t[32][33];
    for (int r = threadIdx.y; r < 32; r += blockDim.y) t[r][threadIdx.x] = in[r * 32 + threadIdx.x];
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += blockDim.y) out[r * 32 + threadIdx.x] = t[threadIdx.x][r];
}

void launch(const double* in, double* out) {
    transpose_double_padded<<<1, dim3(32, 8)>>>(in, out);
}
