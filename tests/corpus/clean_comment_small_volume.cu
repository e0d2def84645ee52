// expect: none
// The same filter for volumes of at most 512 x 512 x 256 voxels (67 million): an int index fits.
__global__ void clamp_volume(float* v, int nx, int ny, int nz, float lo, float hi) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    int z = blockIdx.z;
    if (x >= nx) return;
    int i = (z * ny + y) * nx + x;
    v[i] = fminf(fmaxf(v[i], lo), hi);
}
