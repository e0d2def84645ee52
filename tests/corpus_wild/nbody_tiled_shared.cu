// expect: none
// All-pairs n-body with shared-memory tiles of bodies (the classic GPU n-body chapter layout).
#include <cuda_runtime.h>

#define NB_BLOCK 256
#define SOFTENING2 1e-9f

__device__ float3 body_body(float4 bi, float4 bj, float3 ai) {
    float3 r = make_float3(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z);
    float dist2 = r.x * r.x + r.y * r.y + r.z * r.z + SOFTENING2;
    float inv = rsqrtf(dist2);
    float s = bj.w * inv * inv * inv;
    ai.x += r.x * s;
    ai.y += r.y * s;
    ai.z += r.z * s;
    return ai;
}

__global__ void nbody_tiled(const float4* __restrict__ pos, float4* __restrict__ acc, int n) {
    __shared__ float4 sh_pos[NB_BLOCK];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float3 a = make_float3(0.0f, 0.0f, 0.0f);
    int tiles = (n + NB_BLOCK - 1) / NB_BLOCK;      // same for every thread of the block
    for (int t = 0; t < tiles; ++t) {
        int j = t * NB_BLOCK + threadIdx.x;
        sh_pos[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);   // w = 0: no mass
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < NB_BLOCK; ++k) a = body_body(me, sh_pos[k], a);
        __syncthreads();
    }
    if (i < n) acc[i] = make_float4(a.x, a.y, a.z, 0.0f);
}

void nbody_step(const float4* d_pos, float4* d_acc, int n) {
    nbody_tiled<<<(n + NB_BLOCK - 1) / NB_BLOCK, NB_BLOCK>>>(d_pos, d_acc, n);
}
