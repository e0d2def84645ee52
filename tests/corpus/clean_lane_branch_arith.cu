// expect: none
// A lane-dependent branch with no warp-synchronous operation inside.
__global__ void odd_even(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (threadIdx.x & 1) y[i] = x[i] * 2.0f;
        else y[i] = x[i] - 1.0f;
    }
}
