// Which neighbouring shared-memory accesses does nvcc issue as one wide access (LDS.64/128)?
// Measured on the H200 (sm_90, CUDA 13.0, 2026-12-03) for tests/analysis/test_memory.py, which
// holds the measured figures:
//   nvcc -arch=sm_90 -lineinfo -o wide wide_shared_accesses.cu && cuobjdump -sass wide
//   ncu --clock-control none --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum ./wide
// Every kernel runs one block of 256 threads (k21-k26 were measured in a second program).
#include <cstdio>

__global__ void k01_one_statement(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    out[t] = s[2 * t] * s[2 * t + 1]; }
__global__ void k02_two_statements(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; float b = s[2 * t + 1]; out[t] = a * b; }
__global__ void k03_reversed(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float b = s[2 * t + 1]; float a = s[2 * t]; out[t] = a - b; }
__global__ void k04_uniform_if_between(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; if (n > 3) a += 1.0f; float b = s[2 * t + 1]; out[t] = a * b; }
__global__ void k05_global_store_between(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; out[t] = a; float b = s[2 * t + 1]; out[t + 256] = b; }
__global__ void k06_shared_store_between(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; s[600 + (t & 7)] = a; float b = s[2 * t + 1]; out[t] = a * b; }
__global__ void k07_barrier_between(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; __syncthreads(); float b = s[2 * t + 1]; out[t] = a * b; }
__global__ void k08_four_statements(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[4 * t]; float b = s[4 * t + 1]; float c = s[4 * t + 2]; float d = s[4 * t + 3];
    out[t] = a * b + c * d; }
__global__ void k09_odd_base(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t + 1]; float b = s[2 * t + 2]; out[t] = a * b; }
__global__ void k10_divergent_between(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; if (t < 100) a += out[t]; float b = s[2 * t + 1]; out[t] = a * b; }
__global__ void k11_store_pair(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float x = out[t], y = out[t + 256]; __syncthreads();
    s[2 * t] = x; s[2 * t + 1] = y; __syncthreads(); out[t] = s[t] + s[t + 300]; }
__global__ void k12_double_pair(float* out, int n) {
    __shared__ double d[1024]; int t = threadIdx.x;
    d[t] = t; d[t + 256] = t; d[t + 512] = t; d[t + 768] = t; __syncthreads();
    double a = d[2 * t]; double b = d[2 * t + 1]; out[t] = (float)(a * b); }
__global__ void k13_loop_pair(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = 0, b = 0;
    for (int k = 0; k < n; ++k) { a += s[(2 * t + 64 * k) & 1023]; b += s[(2 * t + 64 * k + 1) & 1023]; }
    out[t] = a * b; }
__global__ void k14_loop_pair_plain(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = 0, b = 0;
    for (int k = 0; k < n; ++k) { a += s[2 * t + 2 * k]; b += s[2 * t + 2 * k + 1]; }
    out[t] = a * b; }
__global__ void k15_far_apart(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; float acc = a;
    for (int k = 0; k < n; ++k) acc = acc * 1.0001f + out[k];
    float b = s[2 * t + 1]; out[t] = acc * b; }
__global__ void k16_2d_pair(float* out, int n) {
    __shared__ float m[32][64]; int t = threadIdx.x;
    for (int i = t; i < 2048; i += 256) m[i / 64][i % 64] = i; __syncthreads();
    int r = t / 32, c = t % 32;
    float a = m[r][2 * c]; float b = m[r][2 * c + 1]; out[t] = a * b; }
__global__ void k17_var_index(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    int i = 2 * t; float a = s[i]; float b = s[i + 1]; out[t] = a * b; }

__global__ void k18_test_memory(float* out, int n) {
    __shared__ float s[1024];
    int tid = threadIdx.x;
    s[tid] = out[tid]; s[tid + 256] = out[tid + 256]; s[tid + 512] = tid; s[tid + 768] = tid;
    __syncthreads();
    out[tid] = s[2 * tid];
    out[tid + 256] = s[2 * tid + 1] * s[2 * tid + 3];
    out[tid + 512] = s[4 * tid] + s[4 * tid + 1] + s[4 * tid + 2] + s[4 * tid + 3];
    out[tid + 768] = s[2 * tid + 1] + s[2 * tid + 2];
    out[tid] += s[2 * tid] + s[2 * tid + 1];
}
__global__ void k19_double_single(float* out, int n) {
    __shared__ double d[1024]; int t = threadIdx.x;
    d[t] = t; d[t + 256] = t; d[t + 512] = t; d[t + 768] = t; __syncthreads();
    out[t] = (float)d[2 * t]; }
__global__ void k20_loop_between_reads_only(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; float acc = 0.0f;
    for (int k = 0; k < 4; ++k) acc += s[(t + 32 * k) & 1023];
    float b = s[2 * t + 1]; out[t] = acc + a * b; }
__global__ void k21_pointer_alias(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    const float* p = &s[2 * t]; float a = p[0]; float b = p[1]; out[t] = a * b; }
__global__ void k22_atomic_between(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; atomicAdd(&s[900 + (t & 7)], 1.0f); float b = s[2 * t + 1]; out[t] = a * b; }
__global__ void k23_if_with_loop_between(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; float acc = 0.0f;
    if (n > 3) { for (int k = 0; k < n; ++k) acc += out[k]; }
    float b = s[2 * t + 1]; out[t] = acc + a * b; }
__global__ void k24_const_loop_8_between(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; float acc = 0.0f;
    for (int k = 0; k < 8; ++k) acc += s[(t + 32 * k) & 1023];
    float b = s[2 * t + 1]; out[t] = acc + a * b; }
__global__ void k25_const_loop_32_between(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    float a = s[2 * t]; float acc = 0.0f;
    for (int k = 0; k < 32; ++k) acc += s[(t + 32 * k) & 1023];
    float b = s[2 * t + 1]; out[t] = acc + a * b; }
__global__ void k26_index_variable_updated(float* out, int n) {
    __shared__ float s[1024]; int t = threadIdx.x;
    s[t] = t; s[t + 256] = t; s[t + 512] = t; s[t + 768] = t; __syncthreads();
    int i = 2 * t; float a = s[i]; i += 1; float b = s[i]; out[t] = a * b; }

typedef void (*K)(float*, int);
int main() {
    K ks[] = {k01_one_statement, k02_two_statements, k03_reversed, k04_uniform_if_between,
              k05_global_store_between, k06_shared_store_between, k07_barrier_between,
              k08_four_statements, k09_odd_base, k10_divergent_between, k11_store_pair,
              k12_double_pair, k13_loop_pair, k14_loop_pair_plain, k15_far_apart, k16_2d_pair,
              k17_var_index, k18_test_memory, k19_double_single, k20_loop_between_reads_only,
              k21_pointer_alias, k22_atomic_between, k23_if_with_loop_between,
              k24_const_loop_8_between, k25_const_loop_32_between, k26_index_variable_updated};
    float* out; cudaMalloc(&out, 4096 * sizeof(float)); cudaMemset(out, 0, 4096 * sizeof(float));
    for (K k : ks) k<<<1, 256>>>(out, 4);
    cudaError_t e = cudaDeviceSynchronize();
    printf("done: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
