// expect: none
// Byte checksum done the coalesced way: step k reads one byte per thread, consecutive across
// the grid, and short pairs are read as one 16-bit word per thread.
__global__ void interleaved_checksum(const unsigned char* data, unsigned int* sums, int per_thread) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int total = gridDim.x * blockDim.x;
    unsigned int s = 0;
    for (int k = 0; k < per_thread; ++k)
        s += data[k * total + gid];
    sums[gid] = s;
}

__global__ void short_copy(const short* in, short* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

void launch(const unsigned char* data, unsigned int* sums, int n) {
    interleaved_checksum<<<n / (256 * 64), 256>>>(data, sums, 64);
}
