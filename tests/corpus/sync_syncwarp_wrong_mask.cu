// __syncwarp names all 32 lanes but only the low 16 execute it.
__global__ void low_half_exchange(float* data) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    s[tid] = data[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    if ((tid & 31) < 16) {
        s[tid] += s[tid + 16];
        __syncwarp(0xffffffff);  // expect: sync
        data[blockIdx.x * blockDim.x + tid] = s[tid];
    }
}
