// A shared-memory race: a block stages its rows' maxima and reads a neighbour's slot with no
// barrier between the write and the read.
#include <cuda_runtime.h>
#include <math.h>

__global__ void topk_rows(const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float best[128];
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    float top[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (int c = 0; c < 512; ++c) {
        float v = x[row * 512 + c];
        if (v <= top[3]) continue;
        int i = 3;
        while (i > 0 && top[i - 1] < v) { top[i] = top[i - 1]; --i; }
        top[i] = v;
    }
    best[threadIdx.x] = top[0];
    float neighbour = best[(threadIdx.x + 1) % 128];
    for (int k = 0; k < 4; ++k) y[row * 4 + k] = top[k] + 0.0f * neighbour;
}

extern "C" void torch_f32_256x4_launch(const float* x, float* y, cudaStream_t stream) {
    topk_rows<<<2, 128, 0, stream>>>(x, y);
}
