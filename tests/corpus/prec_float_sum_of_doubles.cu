// Column sums of a double matrix, chunk by chunk: each thread sums one column of a chunk of
// rows into a float, rounding the running sum to float after every double add.
#include <cuda_runtime.h>

constexpr int kCols = 128;
constexpr int kChunk = 1 << 16;

__global__ void column_chunk_sums(const double* __restrict__ data, float* __restrict__ partial,
                                  long long rows) {
    const int c = threadIdx.x;
    const long long first = (long long)blockIdx.x * kChunk;
    const long long last = first + kChunk < rows ? first + kChunk : rows;
    float acc = 0.0f;
    for (long long r = first; r < last; ++r)
        acc += data[r * kCols + c];  // expect: DICE-P005
    partial[(long long)blockIdx.x * kCols + c] = acc;
}

__global__ void weighted_energy(const float* __restrict__ v, const double* __restrict__ w,
                                float* __restrict__ out, int n, int terms) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float e = 0.0f;
    for (int t = 0; t < terms; ++t) {
        const float x = v[(long long)t * n + i];
        e += w[t] * x * x;  // expect: DICE-P005
    }
    out[i] = e;
}

void sums(const double* data, float* partial, long long rows, const float* v, const double* w, float* out, int n) {
    column_chunk_sums<<<(unsigned)((rows + kChunk - 1) / kChunk), kCols>>>(data, partial, rows);
    weighted_energy<<<(n + 255) / 256, 256>>>(v, w, out, n, 64);
}
