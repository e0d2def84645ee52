// A 65536 x 65536 image indexed with int: row * WIDTH reaches 2^32.
#define WIDTH 65536
#define HEIGHT 65536
__global__ void invert(unsigned char* img) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < WIDTH && y < HEIGHT) {
        int idx = y * WIDTH + x;  // expect: overflow
        img[idx] = 255 - img[idx];
    }
}
