// Direct-form FIR filter: out[i] = sum_k taps[k] * in[i + k]; `in` holds n_out + TAPS - 1
// samples and the coefficients live in constant memory.
#include <cuda_runtime.h>

#define TAPS 31

__constant__ float c_taps[TAPS];

__global__ void fir_filter(const float* __restrict__ in, float* __restrict__ out, int n_out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_out) {
        float acc = 0.0f;
        // c_taps has TAPS entries (0..TAPS-1): k == TAPS reads past it, and past the end of `in` for the last output
        for (int k = 0; k <= TAPS; ++k) acc += c_taps[k] * in[i + k];  // expect: bounds
        out[i] = acc;
    }
}

void launch_fir(const float* d_in, float* d_out, const float* h_taps) {
    const int n_out = 48000 * 60;
    cudaMemcpyToSymbol(c_taps, h_taps, TAPS * sizeof(float));
    fir_filter<<<(n_out + 255) / 256, 256>>>(d_in, d_out, n_out);
}
