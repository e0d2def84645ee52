// Doubles accessed with a stride of 16 elements: half-warps collide on the same banks.
__global__ void strided_doubles(const double* in, double* out) {
    __shared__ double s[32 * 16];
    int tid = threadIdx.x;
    for (int k = 0; k < 16; ++k) s[k * 32 + tid] = in[blockIdx.x * 512 + k * 32 + tid];
    __syncthreads();
    out[blockIdx.x * 32 + tid] = s[tid * 16];  // expect: bank-conflict
}

void launch(const double* in, double* out, int blocks) {
    strided_doubles<<<blocks, 32>>>(in, out);
}
