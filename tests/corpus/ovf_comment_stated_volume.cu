// A volume filter run on volumes of up to 1536 x 1536 x 1024 voxels (2.4e9): the flat index
// below is an int.
__global__ void clamp_volume(float* v, int nx, int ny, int nz, float lo, float hi) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    int z = blockIdx.z;
    if (x >= nx) return;
    int i = (z * ny + y) * nx + x;  // expect: overflow
    v[i] = fminf(fmaxf(v[i], lo), hi);
}
