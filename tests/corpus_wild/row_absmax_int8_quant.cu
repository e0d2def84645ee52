#include <cuda_runtime.h>
#include <stdint.h>

#define BLOCK 256

// Symmetric per-row int8 quantization: scale = max|x| / 127.
// One block per row of a row-major [rows x cols] matrix.
__global__ void quantize_rows_int8_kernel(const float* __restrict__ x,
                                          int8_t* __restrict__ q,
                                          float* __restrict__ scales,
                                          int rows, int cols)
{
    __shared__ float s_max[BLOCK];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    const float* xr = x + (size_t)row * cols;

    float m = 0.0f;
    // `c <= cols` reads one element past the end of the row
    for (int c = tid; c <= cols; c += BLOCK) m = fmaxf(m, fabsf(xr[c]));  // expect: bounds
    s_max[tid] = m;
    __syncthreads();

    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s)
            s_max[tid] = fmaxf(s_max[tid], s_max[tid + s]);
        __syncthreads();
    }

    float amax = s_max[0];
    float scale = amax > 0.0f ? amax / 127.0f : 1.0f;
    float inv = 1.0f / scale;
    if (tid == 0)
        scales[row] = scale;

    for (int c = tid; c < cols; c += BLOCK) {
        float v = rintf(xr[c] * inv);
        q[(size_t)row * cols + c] = (int8_t)fminf(fmaxf(v, -127.0f), 127.0f);
    }
}

void launch_quantize_rows(const float* d_x, int8_t* d_q, float* d_scales,
                          int rows, int cols, cudaStream_t stream)
{
    quantize_rows_int8_kernel<<<rows, BLOCK, 0, stream>>>(d_x, d_q, d_scales, rows, cols);
}
