// Kinetic energy per particle, each thread binding a reference to its particle and reading two
// of its fields: consecutive threads read addresses a whole struct apart.
#include <cuda_runtime.h>

struct Body {
    float3 pos;
    float3 vel;
    float3 force;
    float mass;
    int id;
};

__global__ void kinetic_energy(const Body* __restrict__ bodies, float* __restrict__ energy, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const Body& b = bodies[i];
        const float m = b.mass;  // expect: DICE-C002
        energy[i] = 0.5f * m * (b.vel.x * b.vel.x + b.vel.y * b.vel.y + b.vel.z * b.vel.z);  // expect: DICE-C002
    }
}

void energies(const Body* bodies, float* energy, int n) {
    kinetic_energy<<<264, 256>>>(bodies, energy, n);
}
