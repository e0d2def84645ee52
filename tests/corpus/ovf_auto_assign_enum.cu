// Volume offsets in 32-bit arithmetic: an enum gives the extents.
enum { NX = 1024, NY = 1024, NZ = 4096 };
__global__ void clear_volume(float* v) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x >= NX || y >= NY) return;
    for (int z = 0; z < NZ; ++z) {
        auto off = (z * NY + y) * NX + x;  // expect: overflow
        v[off] = 0.0f;
    }
}

__global__ void copy_volume(const float* a, float* b) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    int off;
    if (x >= NX || y >= NY) return;
    for (int z = 0; z < NZ; ++z) {
        off = (z * NY + y) * NX + x;  // expect: overflow
        b[off] = a[off];
    }
}

void launch(float* v, float* w) {
    clear_volume<<<dim3(NX / 256, NY), 256>>>(v);
    copy_volume<<<dim3(NX / 256, NY), 256>>>(v, w);
}
