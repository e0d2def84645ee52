// expect: none
// exp/sqrt/sin on floats resolve to the float overloads in CUDA C++; literals are suffixed.
__global__ void activations(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float a = exp(v) + sqrt(fabs(v)) + sin(v) * cos(v);
        float b = powf(v, 2.0f) + pow(v, 3.0f) + tanh(v);
        y[i] = a * 0.5f + b / 3.0f + 1e-6f;
    }
}
