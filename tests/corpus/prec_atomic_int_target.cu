// Accumulating float contributions into an int with atomicAdd truncates each one.
__global__ void energy_total(const float* e, int* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&total[0], e[i] * 0.5f);  // expect: precision
}
