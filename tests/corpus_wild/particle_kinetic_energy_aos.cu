#include <cuda_runtime.h>
#include <cstdio>

struct Particle {
    float3 pos;
    float3 vel;
    float3 force;
    float mass;
    float charge;
    int species;
    int cell;
    int flags;
};

__device__ __forceinline__ float warp_reduce(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

__global__ void kinetic_energy_kernel(const Particle* __restrict__ particles,
                                      float* __restrict__ per_particle,
                                      double* __restrict__ total, int n)
{
    float local = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += gridDim.x * blockDim.x) {
        const Particle& p = particles[i];
        // reads two fields of a 56-byte struct through a reference: lanes are a struct apart
        float e = 0.5f * p.mass * (p.vel.x * p.vel.x + p.vel.y * p.vel.y + p.vel.z * p.vel.z);  // expect: DICE-C002
        per_particle[i] = e;
        local += e;
    }
    local = warp_reduce(local);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(total, (double)local);
}

double kinetic_energy(const Particle* d_particles, float* d_e, int n)
{
    double* d_total;
    double h_total = 0.0;
    cudaMalloc(&d_total, sizeof(double));
    cudaMemset(d_total, 0, sizeof(double));

    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const int threads = 256;
    int blocks = (n + threads - 1) / threads;
    if (blocks > sms * 8)
        blocks = sms * 8;
    kinetic_energy_kernel<<<blocks, threads>>>(d_particles, d_e, d_total, n);

    cudaMemcpy(&h_total, d_total, sizeof(double), cudaMemcpyDeviceToHost);
    cudaFree(d_total);
    return h_total;
}
