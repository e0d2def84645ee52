// expect: none
// The guard covers only the store; the barrier after it is reached by every thread.
__global__ void gather_tail(const float* x, float* y, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = 0.0f;
    if (i < n) s[threadIdx.x] = x[i];
    __syncthreads();
    float left = threadIdx.x > 0 ? s[threadIdx.x - 1] : 0.0f;
    if (i < n) y[i] = s[threadIdx.x] - left;
}
