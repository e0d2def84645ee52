// expect: none
// The launcher only accepts sizes that are whole blocks, so no thread falls outside.
__global__ void negate(float* x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = -x[i];
}

void launch_negate(float* x, int n) {
    if (n % 256 != 0) return;
    negate<<<n / 256, 256>>>(x);
}
