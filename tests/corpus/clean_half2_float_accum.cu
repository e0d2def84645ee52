#include <cuda_fp16.h>
// expect: none
// half2 loads, float accumulation.
__global__ void dot_half2(const __half2* a, const __half2* b, float* out, int n2) {
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += blockDim.x * gridDim.x) {
        float2 fa = __half22float2(a[i]);
        float2 fb = __half22float2(b[i]);
        acc += fa.x * fb.x + fa.y * fb.y;
    }
    atomicAdd(out, acc);
}
