// expect: none
// The low half-warp synchronizes with a mask naming exactly the low 16 lanes.
__global__ void low_half(float* data) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    s[tid] = data[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    if ((tid & 31) < 16) {
        float v = s[tid] + s[tid + 16];
        __syncwarp(0x0000ffff);
        data[blockIdx.x * blockDim.x + tid] = v;
    }
}
