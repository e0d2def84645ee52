// Picks channel 0 of 4-channel pixels: stride 4 elements.
__global__ void first_channel(const unsigned char* rgba, unsigned char* gray, int pixels) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < pixels) gray[p] = rgba[4 * p];  // expect: coalescing
}
