// expect: none
// Float-suffixed macro constants, an integer macro, and a double macro used with a double.
#define LOG2_E_F 1.4426950408889634f
#define THRESHOLD 20
#define SCALE_D 0.5

__global__ void softplus_f(const float* a, float* b, const double* c, double* d, int len) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= len) return;
    float z = a[t];
    float e = exp2f(z * LOG2_E_F);
    b[t] = z > THRESHOLD ? z : log1pf(e) * THRESHOLD;
    d[t] = c[t] * SCALE_D;
}
