// A full-mask shuffle under a lane-dependent condition: half the warp never arrives.
__global__ void half_warp_shuffle(const float* in, float* out) {
    int lane = threadIdx.x % 32;
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    if (lane < 16) {
        v += __shfl_down_sync(0xffffffff, v, 8);  // expect: sync
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
