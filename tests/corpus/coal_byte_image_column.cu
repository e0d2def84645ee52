// Grey image transposed on the fly: lanes walk down a column of bytes, `width` bytes apart.
__global__ void column_flip(const unsigned char* img, unsigned char* out, int width, int height) {
    int y = blockIdx.x * blockDim.x + threadIdx.x;
    int x = blockIdx.y;
    if (y < height && x < width)
        out[x * height + y] = img[y * width + x];  // expect: coalescing
}
