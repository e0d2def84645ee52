// Every thread writes its own value into one shared slot.
__global__ void last_writer(const int* in, int* out) {
    __shared__ int vals[1];
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    vals[0] = v;  // expect: race
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = vals[0];
}
