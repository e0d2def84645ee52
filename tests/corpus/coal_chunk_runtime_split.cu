// Each thread takes a contiguous slice of the input, its length computed at run time.
__global__ void slice_sum(const float* in, float* out, int n) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int total = gridDim.x * blockDim.x;
    int per = (n + total - 1) / total;
    int begin = gid * per;
    float s = 0.0f;
    for (int k = 0; k < per; ++k) {
        int i = begin + k;
        if (i < n) s += in[i];  // expect: coalescing
    }
    out[gid] = s;
}
