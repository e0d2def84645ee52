#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void oob(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = 1.0f;
}

__global__ void race(float* y) {
  __shared__ float s[64];
  s[threadIdx.x] = threadIdx.x;
  float v = s[(threadIdx.x + 1) % 64];
  y[threadIdx.x] = v;
}

__global__ void divergent_sync(float* y) {
  if (threadIdx.x < 16) __syncthreads();
  y[threadIdx.x] = 1.0f;
}

__global__ void uninit(const float* x, float* y) {
  y[threadIdx.x] = x[threadIdx.x] * 2.0f;
}

__global__ void strided(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 32) y[i] = x[i * 32];
}

__global__ void bank(float* y) {
  __shared__ float s[32 * 32];
  s[threadIdx.x * 32] = threadIdx.x;
  __syncthreads();
  y[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x * 32];
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "oob";
  int n = 1 << 22;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float) + 4096);
  cudaMalloc(&y, n * sizeof(float));
  if (!strcmp(what, "oob")) { float* small; cudaMalloc(&small, 1000 * 4); oob<<<4, 256>>>(small, 1000); }
  if (!strcmp(what, "race")) race<<<1, 64>>>(y);
  if (!strcmp(what, "sync")) divergent_sync<<<1, 32>>>(y);
  if (!strcmp(what, "init")) uninit<<<1, 64>>>(x, y);
  if (!strcmp(what, "strided")) { cudaMemset(x, 0, n * 4); strided<<<n / 32 / 256, 256>>>(x, y, n); bank<<<64, 32>>>(y); }
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s: %s\n", what, cudaGetErrorString(e));
  return 0;
}
