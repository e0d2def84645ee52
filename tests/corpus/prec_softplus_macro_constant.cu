// Constants spelled as macros of unsuffixed literals: each use promotes the float operand to double.
#define LOG2_E 1.4426950408889634
#define HALF_BETA (0.5)
#define THRESHOLD 20

__global__ void softplus_scaled(const float* a, float* b, int len) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= len) return;
    float z = a[t];
    float e = exp2f(z * LOG2_E);  // expect: precision
    b[t] = z > THRESHOLD ? z : HALF_BETA * log1pf(e);  // expect: precision
}
