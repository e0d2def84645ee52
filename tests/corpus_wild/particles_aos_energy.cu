// Kinetic energy per particle from an array-of-structs particle store (an MD code's analysis step).
#include <cuda_runtime.h>

struct Particle {
    float3 pos;
    float3 vel;
    float3 force;
    float mass;
};  // 40 bytes

__global__ void kinetic_energy(const Particle* __restrict__ p, float* __restrict__ ke, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    // each field load strides 40 bytes across the warp: a request touches 32 sectors instead of 4
    const float vx = p[i].vel.x, vy = p[i].vel.y, vz = p[i].vel.z, m = p[i].mass;  // expect: coalescing
    ke[i] = 0.5f * m * (vx * vx + vy * vy + vz * vz);
}

void particle_energies(const Particle* d_p, float* d_ke, int n) {
    kinetic_energy<<<(n + 255) / 256, 256>>>(d_p, d_ke, n);
}
