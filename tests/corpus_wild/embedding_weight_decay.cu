// Decoupled weight decay applied to a large embedding table (vocab x dim, row-major).
#include <cuda_runtime.h>

constexpr int kVocab = 250000;
constexpr int kEmbedDim = 12288;   // 250,000 x 12,288 = 3.07e9 weights

__global__ void embedding_decay(float* table, int vocab, int dim, float keep) {
    int d = blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= dim) return;
    for (int row = blockIdx.y; row < vocab; row += gridDim.y) {
        // row * dim exceeds 2^31 from row 174,763 on: the int product wraps
        table[row * dim + d] *= keep;  // expect: overflow
    }
}

void apply_weight_decay(float* d_table, float lr, float wd) {
    dim3 grid(kEmbedDim / 256, 4096);
    embedding_decay<<<grid, 256>>>(d_table, kVocab, kEmbedDim, 1.0f - lr * wd);
}
