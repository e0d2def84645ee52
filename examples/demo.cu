// A small inference block: layer input → MLP up-projection with GELU → softmax over logits,
// with a couple of helpers. Each `// @dice:` comment is an intent; `dice generate examples/demo.cu`
// writes a tuned kernel below each one (between @dice-begin/@dice-end markers) and leaves every
// other line of this file as it is.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdio>

// Hand-written: fill a buffer with a constant (used to reset accumulators).
__global__ void fill_kernel(float* __restrict__ out, float value, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

// @dice: y = relu(a) * 2.5 + b; a, b: f32[16777216]; name=scale_shift

// @dice: h = gelu(x @ W + bias); x: bf16[8192, 1024]; W: bf16[1024, 4096]; bias: bf16[4096]
// name=mlp_up; budget=12

// @dice: p = softmax(logits, dim=1); logits: f32[4096, 1024]; name=row_softmax

// @dice: s = sum(x, dim=1); x: f32[N, 4096]; N=8192; name=row_sum

// @dice: 计算一个8192x4096的FP32矩阵每一行的最大值，针对A100

// Hand-written host code: reset the logits buffer before a step.
void reset_logits(float* logits, long long n, cudaStream_t stream) {
  fill_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(logits, 0.0f, n);
  if (cudaGetLastError() != cudaSuccess) std::fprintf(stderr, "fill_kernel failed to launch\n");
}
