// expect: none
// Batches of up to 64 images of 8192 x 8192 pixels: the plane offset fits an int, the batch
// offset is computed in 64 bits.
__global__ void add_plane(float* imgs, const float* plane, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x >= w) return;
    int pix = y * w + x;
    size_t offset = (size_t)blockIdx.z * h * w + pix;
    imgs[offset] += plane[pix];
}
