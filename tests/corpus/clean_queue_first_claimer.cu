// expect: none
// Work-queue append: each accepted item claims a slot from a shared tail counter; the thread
// that claimed slot 0 (exactly one: the counter hands out distinct values) publishes the head.
__global__ void enqueue_hits(const int* keys, int* queue, int* head_out, int* global_tail, int n, int wanted) {
    __shared__ unsigned s_tail;
    __shared__ int s_head;
    if (threadIdx.x == 0) s_tail = 0;
    __syncthreads();
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned pos = 0xffffffffu;
    if (k < n && keys[k] == wanted) pos = atomicAdd(&s_tail, 2u);
    __syncthreads();
    if (pos == 0) s_head = atomicAdd(global_tail, (int)s_tail);
    __syncthreads();
    if (pos != 0xffffffffu) {
        queue[s_head + pos] = k;
        queue[s_head + pos + 1] = keys[k];
    }
    if (threadIdx.x == 0) head_out[blockIdx.x] = s_head;
}
