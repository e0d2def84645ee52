// A barrier under a condition on loaded data.
__global__ void positive_only(const float* x, float* y, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    if (v > 0.0f) {
        s[threadIdx.x] = v;
        __syncthreads();  // expect: sync
        y[i] = s[threadIdx.x];
    }
}
