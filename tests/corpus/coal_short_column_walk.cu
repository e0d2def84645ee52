// 16-bit depth image stored column-major but walked with threadIdx.x along the rows: lanes
// are `height` elements apart.
#define WIDTH 1920
#define HEIGHT 1080
__global__ void threshold_depth(const unsigned short* depth, unsigned char* mask, unsigned short limit) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < WIDTH && y < HEIGHT) {
        unsigned short d = depth[x * HEIGHT + y];  // expect: coalescing
        mask[y * WIDTH + x] = d < limit ? 255 : 0;
    }
}

void launch(const unsigned short* depth, unsigned char* mask) {
    threshold_depth<<<dim3((WIDTH + 127) / 128, HEIGHT), 128>>>(depth, mask, 4000);
}
