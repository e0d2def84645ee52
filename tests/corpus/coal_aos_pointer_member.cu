// Particle push through a pointer to each thread's record: only the charge and the position's
// x are touched, so a warp's accesses are one 48-byte record apart.
#include <cuda_runtime.h>

struct Record {
    float x, y, z;
    float vx, vy, vz;
    float charge;
    float weight;
    int cell, species, flags, pad;
};

__global__ void drift_x(Record* records, float field, float dt, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Record* r = &records[i];
    r->x += r->charge * field * dt;  // expect: DICE-C002
}

void drift(Record* records, float field, float dt, int n) {
    drift_x<<<(n + 127) / 128, 128>>>(records, field, dt, n);
}
