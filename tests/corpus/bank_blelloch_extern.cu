// Blelloch scan over a dynamic shared buffer of n elements (n given at launch).
__global__ void prescan(float* g_odata, const float* g_idata, int n) {
    extern __shared__ float temp[];
    int thid = threadIdx.x;
    int offset = 1;
    temp[2 * thid] = g_idata[2 * thid];
    temp[2 * thid + 1] = g_idata[2 * thid + 1];
    for (int d = n >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            temp[bi] += temp[ai];  // expect: bank-conflict
        }
        offset *= 2;
    }
    if (thid == 0) { temp[n - 1] = 0; }
    for (int d = 1; d < n; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            float t = temp[ai];  // expect: bank-conflict
            temp[ai] = temp[bi];  // expect: bank-conflict
            temp[bi] += t;  // expect: bank-conflict
        }
    }
    __syncthreads();
    g_odata[2 * thid] = temp[2 * thid];
    g_odata[2 * thid + 1] = temp[2 * thid + 1];
}

void launch(float* out, const float* in) {
    prescan<<<1, 512, 1024 * sizeof(float)>>>(out, in, 1024);
}
