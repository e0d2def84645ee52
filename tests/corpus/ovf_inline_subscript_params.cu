// A 3-D volume 2048 x 2048 x 1024 smoothed along z; the offset is computed inline in int from
// extents the host passes as constants.
__global__ void smooth_z(const float* in, float* out, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    for (int z = 1; z + 1 < nz; ++z) {
        if (x < nx && y < ny)
            out[(z * ny + y) * nx + x] = 0.5f * in[(z * ny + y) * nx + x]  // expect: overflow
                + 0.25f * (in[((z - 1) * ny + y) * nx + x] + in[((z + 1) * ny + y) * nx + x]);  // expect: overflow
    }
}

#define NX 2048
#define NY 2048
#define NZ 1024
void run(const float* in, float* out) {
    smooth_z<<<dim3(NX / 128, NY), 128>>>(in, out, NX, NY, NZ);
}
