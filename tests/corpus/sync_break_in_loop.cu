// A thread-dependent break inside a loop that has a barrier after it in the body.
__global__ void search_rows(const int* keys, int* found, int rows, int key) {
    __shared__ int hits[256];
    int tid = threadIdx.x;
    for (int r = 0; r < rows; ++r) {
        int k = keys[r * blockDim.x + tid];
        if (k == key) break;
        hits[tid] = k;
        __syncthreads();  // expect: sync
        found[r] = hits[0];
        __syncthreads();  // expect: sync
    }
}
