// Loss and norm totals of a 2^28-element tensor, each built by atomicAdds of the whole grid into
// one float: past 2^24 like-signed adds the total stops growing.
#include <cuda_runtime.h>

constexpr long long kElements = 1LL << 28;

__global__ void squared_error_total(const float* __restrict__ pred, const float* __restrict__ target,
                                    float* __restrict__ loss, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float d = pred[i] - target[i];
        atomicAdd(loss, d * d);  // expect: DICE-P006
    }
}

__global__ void abs_total_strided(const float* __restrict__ x, float* __restrict__ norm, long long n) {
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&norm[0], fabsf(x[i]));  // expect: DICE-P006
}

void totals(const float* pred, const float* target, float* loss, float* norm) {
    const int n = (int)kElements;
    squared_error_total<<<(n + 511) / 512, 512>>>(pred, target, loss, n);
    abs_total_strided<<<528, 256>>>(pred, norm, kElements);
}
