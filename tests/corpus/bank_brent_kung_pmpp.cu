// Brent-Kung scan (textbook style): the reduction and distribution trees index with
// (tid + 1) * 2 * stride - 1, so lanes are 2*stride words apart.
#define SECTION 1024
__global__ void brent_kung_scan(const float* X, float* Y, int n) {
    __shared__ float XY[SECTION];
    int i = 2 * blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) XY[threadIdx.x] = X[i];
    if (i + blockDim.x < n) XY[threadIdx.x + blockDim.x] = X[i + blockDim.x];
    for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2) {
        __syncthreads();
        int index = (threadIdx.x + 1) * 2 * stride - 1;
        if (index < SECTION) XY[index] += XY[index - stride];  // expect: bank-conflict
    }
    for (int stride = SECTION / 4; stride > 0; stride /= 2) {
        __syncthreads();
        int index = (threadIdx.x + 1) * stride * 2 - 1;
        if (index + stride < SECTION) XY[index + stride] += XY[index];  // expect: bank-conflict
    }
    __syncthreads();
    if (i < n) Y[i] = XY[threadIdx.x];
    if (i + blockDim.x < n) Y[i + blockDim.x] = XY[threadIdx.x + blockDim.x];
}

void launch(const float* x, float* y, int n) {
    brent_kung_scan<<<(n + SECTION - 1) / SECTION, SECTION / 2>>>(x, y, n);
}
