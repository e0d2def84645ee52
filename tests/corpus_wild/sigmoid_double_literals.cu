// Logistic activation applied in place.
#include <cuda_runtime.h>

__global__ void sigmoid_inplace(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        // 1.0 is a double: the add and the division run in double and are rounded back to float
        x[i] = 1.0 / (1.0 + expf(-x[i]));  // expect: precision
}

void sigmoid(float* d_x, int n) {
    sigmoid_inplace<<<(n + 511) / 512, 512>>>(d_x, n);
}
