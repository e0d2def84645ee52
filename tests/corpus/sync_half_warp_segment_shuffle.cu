// Half a warp per segment: the guard splits warps (the last segment's half-warp may be out of
// range) while the shuffle still names all 32 lanes.
__global__ void segment_sums_half(const int* offsets, const float* vals, float* sums, int segments) {
    unsigned seg = (blockIdx.x * blockDim.x + threadIdx.x) >> 4;
    unsigned ln = threadIdx.x % 16;
    if (seg < segments) {
        float acc = 0.0f;
        for (int e = offsets[seg] + ln; e < offsets[seg + 1]; e += 16) acc += vals[e];
        for (int s = 8; s >= 1; s /= 2) acc += __shfl_xor_sync(0xffffffff, acc, s);  // expect: sync
        if (ln == 0) sums[seg] = acc;
    }
}

void sum_segments_half(const int* d_off, const float* d_vals, float* d_sums, int segments) {
    segment_sums_half<<<(segments + 7) / 8, 128>>>(d_off, d_vals, d_sums, segments);
}
