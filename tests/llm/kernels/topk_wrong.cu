// Wrong answer: the top four come out in ascending order (PyTorch's are descending).
#include <cuda_runtime.h>
#include <math.h>

__global__ void topk_rows(const float* __restrict__ x, float* __restrict__ y) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= 256) return;
    float top[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (int c = 0; c < 512; ++c) {
        float v = x[row * 512 + c];
        if (v <= top[3]) continue;
        int i = 3;
        while (i > 0 && top[i - 1] < v) { top[i] = top[i - 1]; --i; }
        top[i] = v;
    }
    for (int k = 0; k < 4; ++k) y[row * 4 + k] = top[3 - k];
}

extern "C" void torch_f32_256x4_launch(const float* x, float* y, cudaStream_t stream) {
    topk_rows<<<2, 128, 0, stream>>>(x, y);
}
