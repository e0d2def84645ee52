// Shared bins cleared and then counted into with no barrier between: a fast warp's atomics can
// land before a slow warp clears its bin.
__global__ void histo_init_race(const unsigned char* in, unsigned int* out, int n) {
    __shared__ unsigned int bins[256];
    bins[threadIdx.x] = 0;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[in[i]], 1u);  // expect: race
    __syncthreads();
    atomicAdd(&out[threadIdx.x], bins[threadIdx.x]);
}

void launch(const unsigned char* in, unsigned int* out, int n) {
    histo_init_race<<<(n + 255) / 256, 256>>>(in, out, n);
}
