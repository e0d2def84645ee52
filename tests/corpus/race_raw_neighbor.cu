// Reads a neighbour's element right after writing its own: no barrier between.
__global__ void stencil3(const float* in, float* out, int n) {
    __shared__ float s[258];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid + 1] = in[i];
    if (tid == 0) s[0] = 0.0f;
    if (tid == blockDim.x - 1) s[tid + 2] = 0.0f;
    out[i] = s[tid] + s[tid + 1] + s[tid + 2];  // expect: race
}
