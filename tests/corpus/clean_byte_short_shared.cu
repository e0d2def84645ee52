// expect: none
// Byte and 16-bit shared arrays indexed by the thread: four byte lanes (two short lanes) share
// one 32-bit word, which the hardware serves at once; pairs of shorts per lane are one word.
__global__ void widen(const unsigned char* in, const short* pairs, int* out) {
    __shared__ unsigned char bytes[256];
    __shared__ short halves[512];
    int t = threadIdx.x;
    bytes[t] = in[blockIdx.x * 256 + t];
    halves[2 * t] = pairs[blockIdx.x * 512 + 2 * t];
    halves[2 * t + 1] = pairs[blockIdx.x * 512 + 2 * t + 1];
    __syncthreads();
    out[blockIdx.x * 256 + t] = bytes[255 - t] + halves[2 * t] * halves[2 * t + 1];
}

void launch(const unsigned char* in, const short* pairs, int* out, int blocks) {
    widen<<<blocks, 256>>>(in, pairs, out);
}
