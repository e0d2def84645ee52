// Compound assignment with a double literal: x is widened, added in double, narrowed.
__global__ void bias_decay(float* w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        w[i] *= 0.999;  // expect: precision
        w[i] += 1e-4f;
    }
}
