// expect: none
// Bytes four apart in shared memory are one 32-bit word per lane: no bank conflict; and a
// uchar4 per thread reads global memory contiguously.
__global__ void pack_bytes(const uchar4* in, unsigned char* out) {
    __shared__ unsigned char buf[1024];
    int t = threadIdx.x;
    uchar4 v = in[blockIdx.x * 256 + t];
    buf[4 * t] = v.x;
    buf[4 * t + 1] = v.y;
    buf[4 * t + 2] = v.z;
    buf[4 * t + 3] = v.w;
    __syncthreads();
    out[blockIdx.x * 1024 + t] = buf[t] ^ buf[1023 - t];
}

void launch(const uchar4* in, unsigned char* out, int blocks) {
    pack_bytes<<<blocks, 256>>>(in, out);
}
