// Per-bucket counters in shared memory: the first thread of EACH bucket (one per bucket, so
// up to four threads) writes the single shared leader slot - a write-write race.
__global__ void bucket_leader(const int* keys, int* leaders, int n) {
    __shared__ int s_hits[4];
    __shared__ int s_leader;
    if (threadIdx.x < 4) s_hits[threadIdx.x] = 0;
    __syncthreads();
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    int bucket = k < n ? keys[k] & 3 : 0;
    int old = atomicAdd(&s_hits[bucket], 1);
    if (old == 0) s_leader = threadIdx.x;  // expect: race
    __syncthreads();
    if (threadIdx.x == 0) leaders[blockIdx.x] = s_leader;
}
