// One attention tile per block: Q, K and V tiles of 64 rows x 128 features in dynamic shared
// memory (96 KiB), sized with macros; the limit is raised for a different kernel only.
#include <cuda_runtime.h>

#define TILE 64
#define HEAD 128

__global__ void attention_tile(const float* q, const float* k, const float* v, float* o, int seq) {
    extern __shared__ float smem[];
    float* qs = smem;
    float* ks = qs + TILE * HEAD;
    float* vs = ks + TILE * HEAD;
    const int row = blockIdx.x * TILE;
    for (int i = threadIdx.x; i < TILE * HEAD; i += blockDim.x) {
        qs[i] = q[(size_t)row * HEAD + i];
        ks[i] = k[(size_t)row * HEAD + i];
        vs[i] = v[(size_t)row * HEAD + i];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < TILE * HEAD; i += blockDim.x) {
        const int r = i / HEAD, d = i % HEAD;
        float acc = 0.0f;
        for (int j = 0; j < TILE; ++j) {
            float s = 0.0f;
            for (int e = 0; e < HEAD; ++e) s += qs[r * HEAD + e] * ks[j * HEAD + e];
            acc += s * vs[j * HEAD + d];
        }
        o[(size_t)row * HEAD + i] = acc;
    }
}

__global__ void gather_rows(const float* src, const int* idx, float* dst, int rows) {
    extern __shared__ float staging[];
    const int r = blockIdx.x;
    for (int i = threadIdx.x; i < HEAD; i += blockDim.x) staging[i] = src[(size_t)idx[r] * HEAD + i];
    __syncthreads();
    for (int i = threadIdx.x; i < HEAD; i += blockDim.x) dst[(size_t)r * HEAD + i] = staging[i];
}

void run_attention(const float* q, const float* k, const float* v, float* o, int seq, const float* src,
                   const int* idx, float* dst) {
    const int bytes = 3 * TILE * HEAD * sizeof(float);
    cudaFuncSetAttribute(gather_rows, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    gather_rows<<<seq, 128, bytes>>>(src, idx, dst, seq);
    attention_tile<<<seq / TILE, 256, bytes>>>(q, k, v, o, seq);  // expect: DICE-M007
}
