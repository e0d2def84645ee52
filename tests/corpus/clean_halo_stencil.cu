// expect: none
// 1-D stencil with halo cells loaded by the edge threads, one barrier before the reads.
#define R 3
__global__ void stencil7(const float* in, float* out, int n) {
    __shared__ float s[256 + 2 * R];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + R;
    s[l] = in[g];
    if (threadIdx.x < R) {
        s[l - R] = in[g - R];
        s[l + 256] = in[g + 256];
    }
    __syncthreads();
    float acc = 0.0f;
    for (int k = -R; k <= R; ++k) acc += s[l + k];
    out[g] = acc;
}

void launch(const float* in, float* out, int n) {
    stencil7<<<n / 256, 256>>>(in, out, n);
}
