// expect: none
// The bounds check lives in a helper the kernel calls in its branch condition.
__device__ __forceinline__ bool in_range(int i, int n) { return i < n; }

__global__ void square(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (!in_range(i, n)) return;
    x[i] = x[i] * x[i];
}

void launch_square(float* x, int n) {
    square<<<(n + 127) / 128, 128>>>(x, n);
}
