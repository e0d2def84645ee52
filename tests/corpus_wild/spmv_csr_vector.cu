// expect: none
// CSR sparse matrix-vector product, one warp per row (the "vector" CSR kernel).
#include <cuda_runtime.h>

__global__ void spmv_csr_vector(int num_rows, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y) {
    int warp_id = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (warp_id < num_rows) {                 // warp-uniform: the shuffles below see all 32 lanes
        int start = row_ptr[warp_id];
        int end = row_ptr[warp_id + 1];
        float sum = 0.0f;
        for (int j = start + lane; j < end; j += 32) sum += vals[j] * x[col_idx[j]];
        for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
        if (lane == 0) y[warp_id] = sum;
    }
}

void spmv(int rows, const int* d_rp, const int* d_ci, const float* d_v, const float* d_x, float* d_y) {
    spmv_csr_vector<<<(rows * 32 + 255) / 256, 256>>>(rows, d_rp, d_ci, d_v, d_x, d_y);
}
