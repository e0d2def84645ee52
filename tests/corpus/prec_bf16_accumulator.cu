#include <cuda_bf16.h>
// Row sums accumulated in bfloat16 (8 significant bits).
__global__ void row_sum_bf16(const __nv_bfloat16* x, __nv_bfloat16* y, int cols) {
    __nv_bfloat16 acc = __float2bfloat16(0.0f);
    const __nv_bfloat16* row = x + blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        acc += row[c];  // expect: precision
    }
    y[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
