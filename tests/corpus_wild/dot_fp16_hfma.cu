// Partial dot products of two fp16 vectors, one running sum per thread (grid-stride).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void dot_fp16_partial(const __half* __restrict__ a, const __half* __restrict__ b,
                                 __half* __restrict__ partial, int n) {
    __half acc = __float2half(0.0f);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        // an 11-bit-mantissa running sum over many products: small terms vanish once acc grows
        acc = __hfma(a[i], b[i], acc);  // expect: precision
    partial[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

void dot_partials(const __half* d_a, const __half* d_b, __half* d_partial, int n) {
    dot_fp16_partial<<<80, 256>>>(d_a, d_b, d_partial, n);
}
