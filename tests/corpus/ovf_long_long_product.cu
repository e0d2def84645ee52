// long long destination, 32-bit product.
__global__ void offsets(long long* out, long long total) {
    long long gid = blockIdx.x * blockDim.x + threadIdx.x;  // expect: overflow
    if (gid < total) out[gid] = gid;
}
