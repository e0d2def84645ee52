// 3-point moving average through a shared tile; the whole body sits inside the bounds check.
#include <cuda_runtime.h>

#define SMOOTH_BLOCK 256

__global__ void smooth3(const float* in, float* out, int n) {
    __shared__ float tile[SMOOTH_BLOCK + 2];
    int i = blockIdx.x * SMOOTH_BLOCK + threadIdx.x;
    if (i < n) {
        tile[threadIdx.x + 1] = in[i];
        if (threadIdx.x == 0) tile[0] = i > 0 ? in[i - 1] : in[i];
        if (threadIdx.x == SMOOTH_BLOCK - 1) tile[SMOOTH_BLOCK + 1] = i + 1 < n ? in[i + 1] : in[i];
        if (i == n - 1) tile[threadIdx.x + 2] = in[i];
        // inside the bounds check: in the last block the threads with i >= n never arrive here
        __syncthreads();  // expect: sync
        out[i] = (tile[threadIdx.x] + tile[threadIdx.x + 1] + tile[threadIdx.x + 2]) * (1.0f / 3.0f);
    }
}

void moving_average(const float* d_in, float* d_out, int n) {
    smooth3<<<(n + SMOOTH_BLOCK - 1) / SMOOTH_BLOCK, SMOOTH_BLOCK>>>(d_in, d_out, n);
}
