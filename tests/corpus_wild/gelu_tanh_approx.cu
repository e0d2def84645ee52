// GELU with the tanh approximation, as in transformer MLP blocks.
#include <cuda_runtime.h>

#define SQRT_2_OVER_PI 0.7978845608028654
#define GELU_COEF 0.044715

__global__ void gelu_forward(const float* __restrict__ in, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    // both macros are un-suffixed double constants: x*x*x and the sum are evaluated in double
    float inner = SQRT_2_OVER_PI * (x + GELU_COEF * x * x * x);  // expect: precision
    out[i] = 0.5f * x * (1.0f + tanhf(inner));
}

void gelu(const float* d_in, float* d_out, int n) {
    gelu_forward<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
}
