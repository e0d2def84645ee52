// Batched softmax-style scaling: each block row (blockIdx.y) is one image of 4096 x 4096 values,
// 200 images in all. The per-image base pointer is offset in int: img * rows * cols wraps once
// img * 16.7M passes 2^31 (from image 128 on).
#define IMAGES 200
#define ROWS 4096
#define COLS 4096

__global__ void scale_images(float* data, const float* gain, int rows, int cols) {
    int img = blockIdx.y;
    float* base = data + img * rows * cols;  // expect: overflow
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    for (; p < rows * cols; p += gridDim.x * blockDim.x) base[p] *= gain[img];
}

void scale_all(float* d_data, const float* d_gain) {
    dim3 grid(1024, IMAGES);
    scale_images<<<grid, 256>>>(d_data, d_gain, ROWS, COLS);
}
