// Stride-2 access: every other element, half of each sector wasted.
__global__ void even_elements(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[2 * i];  // expect: coalescing
}
