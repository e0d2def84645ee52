// Upper-cases a large log buffer in place (the first pass of a case-insensitive grep).
#include <cstddef>
#include <cuda_runtime.h>

static const size_t kLogBytes = 6ull << 30;   // 6 GiB of text

__global__ void upcase_ascii(unsigned char* buf, size_t n) {
    // the counter is int while n is 6 GiB: it overflows past 2^31 and the tail is never visited
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {  // expect: overflow
        unsigned char c = buf[i];
        buf[i] = (c >= 'a' && c <= 'z') ? (unsigned char)(c - 32) : c;
    }
}

void upcase_log(unsigned char* d_log, int sm_count) {
    upcase_ascii<<<sm_count * 8, 256>>>(d_log, kLogBytes);
}
