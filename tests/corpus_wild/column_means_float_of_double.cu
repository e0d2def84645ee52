#include <cuda_runtime.h>
#include <vector>
#include <cstdio>

// Feature matrix: 16M samples x 64 features, row-major doubles.
constexpr int kFeatures = 64;
constexpr int kRowsPerChunk = 1 << 20;

__global__ void column_partial_sums_kernel(const double* __restrict__ data,
                                           float* __restrict__ partial,
                                           long long num_rows)
{
    const int f = threadIdx.x;
    const long long row0 = (long long)blockIdx.x * kRowsPerChunk;
    long long row1 = row0 + kRowsPerChunk;
    if (row1 > num_rows)
        row1 = num_rows;

    float acc = 0.0f;
    for (long long r = row0; r < row1; ++r)
        // a float running sum of double data over 2^20 rows: every add rounds back to float
        acc += data[r * kFeatures + f];  // expect: DICE-P005

    partial[(size_t)blockIdx.x * kFeatures + f] = acc;
}

std::vector<double> column_means(const double* d_data, long long num_rows)
{
    const int chunks = (int)((num_rows + kRowsPerChunk - 1) / kRowsPerChunk);
    float* d_partial;
    cudaMalloc(&d_partial, (size_t)chunks * kFeatures * sizeof(float));
    column_partial_sums_kernel<<<chunks, kFeatures>>>(d_data, d_partial, num_rows);

    std::vector<float> h_partial((size_t)chunks * kFeatures);
    cudaMemcpy(h_partial.data(), d_partial, h_partial.size() * sizeof(float),
               cudaMemcpyDeviceToHost);
    cudaFree(d_partial);

    std::vector<double> means(kFeatures, 0.0);
    for (int c = 0; c < chunks; ++c)
        for (int f = 0; f < kFeatures; ++f)
            means[f] += h_partial[(size_t)c * kFeatures + f];
    for (int f = 0; f < kFeatures; ++f)
        means[f] /= (double)num_rows;
    return means;
}
