// expect: none
// Image indexing widened before the multiply.
__global__ void brighten(unsigned char* img, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        size_t idx = (size_t)y * width + x;
        int v = img[idx] + 16;
        img[idx] = v > 255 ? 255 : v;
    }
}

void launch(unsigned char* img, int w, int h) {
    brighten<<<dim3(w / 32, h / 8), dim3(32, 8)>>>(img, w, h);
}
