#include <cuda_runtime.h>
#include <cfloat>
#include <cstdio>

// Attention scores: one block per row, the whole row (up to 16384 floats) is
// kept in shared memory between the max, exp and normalise passes.
constexpr int kMaxCols = 16384;
constexpr int kThreads = 512;

__global__ void row_softmax_smem_kernel(const float* __restrict__ scores,
                                        float* __restrict__ probs, int cols)
{
    extern __shared__ float srow[];
    __shared__ float s_red[kThreads / 32];

    const float* in = scores + (size_t)blockIdx.x * cols;
    float* out = probs + (size_t)blockIdx.x * cols;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

    float m = -FLT_MAX;
    for (int c = tid; c < cols; c += kThreads) {
        srow[c] = in[c];
        m = fmaxf(m, srow[c]);
    }
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (lane == 0) s_red[warp] = m;
    __syncthreads();
    m = s_red[0];
    for (int w = 1; w < kThreads / 32; ++w)
        m = fmaxf(m, s_red[w]);
    __syncthreads();

    float sum = 0.0f;
    for (int c = tid; c < cols; c += kThreads) {
        const float e = __expf(srow[c] - m);
        srow[c] = e;
        sum += e;
    }
    for (int o = 16; o > 0; o >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0) s_red[warp] = sum;
    __syncthreads();
    sum = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w)
        sum += s_red[w];

    const float inv = 1.0f / sum;
    for (int c = tid; c < cols; c += kThreads)
        out[c] = srow[c] * inv;
}

void row_softmax(const float* d_scores, float* d_probs, int rows, int cols,
                 cudaStream_t stream)
{
    if (cols > kMaxCols) {
        fprintf(stderr, "row too long\n");
        return;
    }
    const size_t smem = kMaxCols * sizeof(float);
    // 64 KiB of dynamic shared memory, above the 48 KiB default, and the limit is never raised
    row_softmax_smem_kernel<<<rows, kThreads, smem, stream>>>(d_scores, d_probs, cols);  // expect: DICE-M007
}
