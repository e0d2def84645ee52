// A correct top-4 of each row of a 256 x 512 f32 matrix: one warp per row, each lane keeps its
// own sorted top 4, then the warp merges them four times by shuffles.
#include <cuda_runtime.h>

namespace {
constexpr int kRows = 256, kCols = 512, kTop = 4;

__device__ void insert(float (&top)[kTop], float v) {
    if (v <= top[kTop - 1]) return;
    int i = kTop - 1;
    while (i > 0 && top[i - 1] < v) { top[i] = top[i - 1]; --i; }
    top[i] = v;
}

__global__ void topk_rows(const float* __restrict__ x, float* __restrict__ y) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= kRows) return;
    float top[kTop];
    for (int i = 0; i < kTop; ++i) top[i] = -INFINITY;
    for (int c = lane; c < kCols; c += 32) insert(top, x[(long long)row * kCols + c]);
    int taken = 0;                       // how many of this lane's values were output
    for (int k = 0; k < kTop; ++k) {
        float mine = taken < kTop ? top[taken] : -INFINITY;
        float best = mine;
        int owner = lane;
        for (int offset = 16; offset > 0; offset /= 2) {
            float other = __shfl_xor_sync(0xffffffffu, best, offset);
            int other_owner = __shfl_xor_sync(0xffffffffu, owner, offset);
            if (other > best || (other == best && other_owner < owner)) { best = other; owner = other_owner; }
        }
        if (lane == owner) ++taken;
        if (lane == 0) y[row * kTop + k] = best;
    }
}
}  // namespace

extern "C" void torch_f32_256x4_launch(const float* x, float* y, cudaStream_t stream) {
    topk_rows<<<kRows / 4, 128, 0, stream>>>(x, y);
}
