// Array of structs: each thread reads one field of a 32-byte particle.
struct Particle {
    float x, y, z;
    float vx, vy, vz;
    float mass;
    float charge;
};

__global__ void advance(Particle* p, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    p[i].x += p[i].vx * dt;  // expect: coalescing
}
