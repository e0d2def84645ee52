// Column pass of a separable 16-tap filter on double-precision tiles (a seismic imaging kernel);
// the result is written transposed so the next pass reads rows.
#include <cuda_runtime.h>

#define FTILE 16

__global__ void column_pass_f64(const double* __restrict__ in, const double* __restrict__ taps,
                                double* __restrict__ out, int width) {
    __shared__ double tile[FTILE][FTILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    tile[ty][tx] = in[(blockIdx.y * FTILE + ty) * width + blockIdx.x * FTILE + tx];
    __syncthreads();
    double acc = 0.0;
    for (int k = 0; k < FTILE; ++k)
        // lanes with consecutive tx read down one column: rows are 128 bytes apart, one bank pair
        acc += tile[tx][k] * taps[k * FTILE + ty];  // expect: bank-conflict
    out[(blockIdx.x * FTILE + ty) * width + blockIdx.y * FTILE + tx] = acc;
}

void filter_columns(const double* d_in, const double* d_taps, double* d_out, int width, int height) {
    dim3 block(FTILE, FTILE);
    dim3 grid(width / FTILE, height / FTILE);
    column_pass_f64<<<grid, block>>>(d_in, d_taps, d_out, width);
}
