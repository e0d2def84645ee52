// expect: none
// A 2-D rounded-up grid with both coordinates checked; the flat index is computed after.
__global__ void threshold(const float* in, float* out, int w, int h, float t) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        int p = y * w + x;
        out[p] = in[p] > t ? 1.0f : 0.0f;
    }
}

void launch_threshold(const float* in, float* out, int w, int h, float t) {
    dim3 block(32, 8);
    dim3 grid((w + 31) / 32, (h + 7) / 8);
    threshold<<<grid, block>>>(in, out, w, h, t);
}
