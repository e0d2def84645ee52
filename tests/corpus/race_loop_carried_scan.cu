// Hillis-Steele scan with a single barrier: reads of step d race with writes of step d.
__global__ void scan_one_barrier(const float* in, float* out) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (int d = 1; d < 256; d *= 2) {
        float v = tid >= d ? s[tid - d] : 0.0f;
        s[tid] += v;  // expect: race
        __syncthreads();
    }
    out[blockIdx.x * 256 + tid] = s[tid];
}
