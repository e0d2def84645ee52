// All-pairs gravitational accelerations (brute force, no tiling); positions carry mass in w.
#include <cuda_runtime.h>

__global__ void nbody_accel(const float4* __restrict__ pos, float4* __restrict__ acc, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 pi = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; ++j) {
        float4 pj = pos[j];
        float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
        // the softening 1e-9 is a double: r2 is summed in double on every interaction
        float r2 = dx * dx + dy * dy + dz * dz + 1e-9;  // expect: precision
        float inv = rsqrtf(r2);
        float s = pj.w * inv * inv * inv;
        ax += dx * s; ay += dy * s; az += dz * s;
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}

void accelerations(const float4* d_pos, float4* d_acc, int n) {
    nbody_accel<<<(n + 127) / 128, 128>>>(d_pos, d_acc, n);
}
