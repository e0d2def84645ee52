// Byte checksum: each thread sums its own contiguous 64-byte chunk, so a warp's loads are
// 64 bytes apart.
__global__ void chunk_checksum(const unsigned char* data, unsigned int* sums, int per_thread) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int s = 0;
    for (int k = 0; k < per_thread; ++k)
        s += data[gid * per_thread + k];  // expect: coalescing
    sums[gid] = s;
}

void launch(const unsigned char* data, unsigned int* sums, int n) {
    chunk_checksum<<<n / (256 * 64), 256>>>(data, sums, 64);
}
