// Row softmax with the whole row staged in dynamic shared memory: rows of up to 16384 floats
// (64 KiB), launched without raising the kernel's dynamic shared-memory limit.
#include <cuda_runtime.h>

constexpr int kMaxCols = 16384;
constexpr int kThreads = 256;

__global__ void row_softmax_staged(const float* __restrict__ x, float* __restrict__ y, int cols) {
    extern __shared__ float row[];
    __shared__ float partial[kThreads / 32];
    const float* in = x + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        row[c] = in[c];
        m = fmaxf(m, row[c]);
    }
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = m;
    __syncthreads();
    m = partial[0];
    for (int w = 1; w < kThreads / 32; ++w) m = fmaxf(m, partial[w]);
    __syncthreads();
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) s += __expf(row[c] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
    __syncthreads();
    s = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w) s += partial[w];
    for (int c = threadIdx.x; c < cols; c += kThreads) y[(size_t)blockIdx.x * cols + c] = __expf(row[c] - m) / s;
}

void row_softmax(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    const size_t bytes = kMaxCols * sizeof(float);
    row_softmax_staged<<<rows, kThreads, bytes, stream>>>(x, y, cols);  // expect: DICE-M007
}
