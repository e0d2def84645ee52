// expect: none
// Float maximum and minimum in shared memory through compare-and-swap loops: the plain read of the slot
// is checked by the swap, and the result is read after a barrier.
__device__ void shared_fmax(float* slot, float v) {
    int* p = (int*)slot;
    int old = *p;
    while (__int_as_float(old) < v) {
        int seen = atomicCAS(p, old, __float_as_int(v));
        if (seen == old) break;
        old = seen;
    }
}

__device__ void shared_fmin(float* slot, float v) {
    int* p = (int*)slot;
    while (true) {
        int cur = *p;
        if (__int_as_float(cur) <= v) break;
        if (atomicCAS(p, cur, __float_as_int(v)) == cur) break;
    }
}

__global__ void block_max(const float* in, float* out) {
    __shared__ float best, least;
    if (threadIdx.x == 0) { best = -1e30f; least = 1e30f; }
    __syncthreads();
    shared_fmax(&best, in[blockIdx.x * blockDim.x + threadIdx.x]);
    shared_fmin(&least, in[blockIdx.x * blockDim.x + threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = best - least;
}

void launch(const float* in, float* out, int blocks) {
    block_max<<<blocks, 256>>>(in, out);
}
