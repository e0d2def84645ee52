// Complex numbers stored interleaved, but only the real parts are read: stride 2 in doubles.
struct Complex { double re; double im; };

__global__ void real_parts(const Complex* z, double* re, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) re[i] = z[i].re;  // expect: coalescing
}
