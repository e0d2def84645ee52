// Squared Euclidean distances between a query set and a reference set (k-NN's first pass).
// The reference points are stored dimension-major so that a warp reads them contiguously.
#include <cuda_runtime.h>

#define NUM_QUERIES 120000
#define NUM_REFS 40000
#define FEATURE_DIM 16

__global__ void pairwise_sq_dist(const float* __restrict__ queries, const float* __restrict__ refs_t,
                                 float* __restrict__ dist, int rows, int cols, int dim) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols) return;
    float acc = 0.0f;
    for (int k = 0; k < dim; ++k) {
        float d = queries[row * dim + k] - refs_t[k * cols + col];
        acc += d * d;
    }
    // 120,000 x 40,000 = 4.8e9 distances: row * cols is computed in int and wraps
    dist[row * cols + col] = acc;  // expect: overflow
}

void knn_distances(const float* d_queries, const float* d_refs_t, float* d_dist) {
    dim3 block(32, 8);
    dim3 grid(NUM_REFS / 32, NUM_QUERIES / 8);
    pairwise_sq_dist<<<grid, block>>>(d_queries, d_refs_t, d_dist, NUM_QUERIES, NUM_REFS, FEATURE_DIM);
}
