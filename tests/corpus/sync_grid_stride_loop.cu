// A barrier in a grid-stride loop: threads run different numbers of iterations.
__global__ void stride_smooth(const float* in, float* out, int n) {
    __shared__ float s[256];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        s[threadIdx.x] = in[i];
        __syncthreads();  // expect: sync
        out[i] = s[threadIdx.x] + s[threadIdx.x ^ 1];
        __syncthreads();  // expect: sync
    }
}
