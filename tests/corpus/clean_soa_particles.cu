// expect: none
// Struct of arrays: each field is its own contiguous array.
struct Particles {
    float* x;
    float* vx;
};

__global__ void advance_soa(float* x, const float* vx, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += vx[i] * dt;
}
