// expect: none
// One warp per segment: the warp's global index (shifted thread id) is the same in all its
// lanes, so the guard keeps whole warps and the full-mask shuffles after the strided loop are safe.
__global__ void segment_sums(const int* offsets, const float* vals, float* sums, int segments) {
    unsigned gw = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    unsigned ln = threadIdx.x % 32;
    if (gw < segments) {
        float acc = 0.0f;
        for (int e = offsets[gw] + ln; e < offsets[gw + 1]; e += 32) acc += vals[e];
        for (int s = 16; s >= 1; s /= 2) acc += __shfl_xor_sync(0xffffffff, acc, s);
        if (ln == 0) sums[gw] = acc;
    }
}

void sum_segments(const int* d_off, const float* d_vals, float* d_sums, int segments) {
    segment_sums<<<(segments + 3) / 4, 128>>>(d_off, d_vals, d_sums, segments);
}
