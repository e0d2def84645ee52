// expect: none
// The same per-image base pointers: widened before the product, or small enough for int.
#define IMAGES 200
#define ROWS 4096
#define COLS 4096

__global__ void scale_images_wide(float* data, const float* gain, int rows, int cols) {
    int img = blockIdx.y;
    float* base = data + (size_t)img * rows * cols;
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    for (; p < rows * cols; p += gridDim.x * blockDim.x) base[p] *= gain[img];
}

__global__ void scale_thumbs(float* data, const float* gain, int rows, int cols) {
    const float* g = gain + blockIdx.y;
    float* base = data + blockIdx.y * rows * cols;
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < rows * cols) base[p] *= *g;
}

void scale_all_ok(float* d_data, const float* d_gain, float* d_thumbs) {
    dim3 grid(1024, IMAGES);
    scale_images_wide<<<grid, 256>>>(d_data, d_gain, ROWS, COLS);
    scale_thumbs<<<dim3(16, IMAGES), 256>>>(d_thumbs, d_gain, 64, 64);
}
