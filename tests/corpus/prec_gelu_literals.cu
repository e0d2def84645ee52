// A GELU written with double constants: every multiply runs in double.
__global__ void gelu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float inner = 0.7978845608 * (v + 0.044715 * v * v * v);  // expect: precision
    y[i] = 0.5f * v * (1.0f + tanhf(inner));
}
