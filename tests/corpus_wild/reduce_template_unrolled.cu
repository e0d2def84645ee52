// expect: none
// Block reduction in the style of the CUDA samples: the block size is a template parameter, the
// unrolled steps test it (uniform across the block), and the last warp finishes with shuffles.
#include <cuda_runtime.h>

template <unsigned int blockSize = 256>
__global__ void reduce_unrolled(const float* __restrict__ g_idata, float* __restrict__ g_odata, unsigned int n) {
    __shared__ float sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int grid_size = blockSize * 2 * gridDim.x;
    float my_sum = 0.0f;
    for (unsigned int i = blockIdx.x * blockSize * 2 + tid; i < n; i += grid_size) {
        my_sum += g_idata[i];
        if (i + blockSize < n) my_sum += g_idata[i + blockSize];
    }
    sdata[tid] = my_sum;
    __syncthreads();
    if (blockSize >= 512) { if (tid < 256) sdata[tid] = my_sum = my_sum + sdata[tid + 256]; __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) sdata[tid] = my_sum = my_sum + sdata[tid + 128]; __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) sdata[tid] = my_sum = my_sum + sdata[tid + 64]; __syncthreads(); }
    if (tid < 32) {
        if (blockSize >= 64) my_sum += sdata[tid + 32];
        for (int offset = 16; offset > 0; offset >>= 1)
            my_sum += __shfl_down_sync(0xffffffffu, my_sum, offset);
    }
    if (tid == 0) g_odata[blockIdx.x] = my_sum;
}

void reduce_partials(const float* d_in, float* d_out, unsigned int n, int blocks) {
    reduce_unrolled<256><<<blocks, 256>>>(d_in, d_out, n);
}
