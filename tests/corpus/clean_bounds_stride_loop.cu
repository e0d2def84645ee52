// expect: none
// A grid-stride loop bounds the index it walks, whatever the grid.
__global__ void fill(float* x, float v, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        x[i] = v;
}

void launch_fill(float* x, float v, int n) {
    int blocks = (n + 511) / 512;
    fill<<<blocks < 1024 ? blocks : 1024, 512>>>(x, v, n);
}
