// expect: none
// GPU Gems 3 naive scan with double buffering: reads from one half, writes the other.
__global__ void scan_naive(float* g_odata, const float* g_idata, int n) {
    extern __shared__ float temp[];
    int thid = threadIdx.x;
    int pout = 0, pin = 1;
    temp[pout * n + thid] = (thid > 0) ? g_idata[thid - 1] : 0;
    __syncthreads();
    for (int offset = 1; offset < n; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (thid >= offset)
            temp[pout * n + thid] = temp[pin * n + thid] + temp[pin * n + thid - offset];
        else
            temp[pout * n + thid] = temp[pin * n + thid];
        __syncthreads();
    }
    g_odata[thid] = temp[pout * n + thid];
}

void launch(float* out, const float* in) {
    scan_naive<<<1, 512, 2 * 512 * sizeof(float)>>>(out, in, 512);
}
