// NCHW layer norm statistics: extents from the host, offsets flattened in int.
__global__ void channel_sums(const float* x, float* sums, int N, int C, int H, int W) {
    int c = blockIdx.x;
    float s = 0.0f;
    for (int n = 0; n < N; ++n)
        for (int hw = threadIdx.x; hw < H * W; hw += blockDim.x)
            s += x[(n * C + c) * H * W + hw];  // expect: overflow
    atomicAdd(&sums[c], s);
}

int run_host() {   // the program's driver (not `main`: the GPU harness supplies its own)
    const int N = 32, C = 256, H = 512, W = 512;
    float *x = nullptr, *sums = nullptr;
    channel_sums<<<C, 256>>>(x, sums, N, C, H, W);
    return 0;
}
