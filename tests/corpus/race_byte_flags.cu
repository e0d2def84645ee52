// Byte flags in shared memory: each thread marks itself, then reads its right neighbour's
// flag with no barrier in between.
__global__ void edge_detect(const float* v, unsigned char* edges, float thr) {
    __shared__ unsigned char above[257];
    int t = threadIdx.x;
    int g = blockIdx.x * 256 + t;
    above[t] = v[g] > thr;
    if (t == 0) above[256] = 0;
    edges[g] = above[t] != above[t + 1];  // expect: race
}

void launch(const float* v, unsigned char* edges, float thr, int blocks) {
    edge_detect<<<blocks, 256>>>(v, edges, thr);
}
