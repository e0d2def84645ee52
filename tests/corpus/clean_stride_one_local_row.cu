// expect: none
// Row pointer arithmetic with a block-uniform base; lanes walk contiguous columns.
__global__ void add_bias(float* x, const float* bias, int cols) {
    float* row = x + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) row[c] += bias[c];
}
