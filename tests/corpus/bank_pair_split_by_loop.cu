// The pair of clean_adjacent_pair_statements.cu with a loop between the two loads: they sit in
// different basic blocks, so ptxas issues them apart, each a stride-2 read (2-way conflict).
__global__ void damped_magnitudes(const float* in, const float* damping, float* out, int steps) {
    __shared__ float s[512];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 512 + tid];
    s[tid + 256] = in[blockIdx.x * 512 + tid + 256];
    __syncthreads();
    float re = s[2 * tid];  // expect: bank-conflict
    for (int k = 0; k < steps; ++k) {
        re *= damping[k];
    }
    float im = s[2 * tid + 1];  // expect: bank-conflict
    out[blockIdx.x * 256 + tid] = re * re + im * im;
}
