// Each thread updates every field of its particle through a reference, and reads a float4 through
// a reference: whole records move, so there is no array-of-structs waste to report.
#include <cuda_runtime.h>

struct Particle {
    float x, y, z, w;
    float vx, vy, vz, age;
};

__global__ void advance(Particle* particles, const float4* __restrict__ accel, float dt, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Particle& p = particles[i];
    const float4& a = accel[i];
    p.vx += a.x * dt;
    p.vy += a.y * dt;
    p.vz += a.z * dt;
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
    p.w = a.w;
    p.age += dt;
}

void step(Particle* particles, const float4* accel, float dt, int n) {
    advance<<<(n + 255) / 256, 256>>>(particles, accel, dt, n);
}
// expect: none
