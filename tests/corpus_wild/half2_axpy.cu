// expect: none
// y = a*x + y on packed half2 pairs: one fused multiply-add per element, nothing accumulated.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void haxpy2(int n2, __half2 a, const __half2* __restrict__ x, __half2* __restrict__ y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += blockDim.x * gridDim.x)
        y[i] = __hfma2(a, x[i], y[i]);
}

void haxpy(const __half* d_x, __half* d_y, int n, int sm_count) {
    __half2 a = __floats2half2_rn(0.5f, 0.5f);
    haxpy2<<<sm_count * 16, 256>>>(n / 2, a, reinterpret_cast<const __half2*>(d_x), reinterpret_cast<__half2*>(d_y));
}
