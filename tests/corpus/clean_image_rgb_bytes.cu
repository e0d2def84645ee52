// expect: none
// RGB to grey on interleaved bytes, a 1920x1080 frame: int indices are far from 2^31.
#define W 1920
#define H 1080
__global__ void rgb_to_grey(const unsigned char* rgb, unsigned char* grey) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    int p = y * W + x;
    float r = rgb[3 * p], g = rgb[3 * p + 1], b = rgb[3 * p + 2];
    grey[p] = (unsigned char)(0.299f * r + 0.587f * g + 0.114f * b);
}

int main() {
    unsigned char *rgb = nullptr, *grey = nullptr;
    dim3 block(32, 8);
    dim3 grid((W + 31) / 32, (H + 7) / 8);
    rgb_to_grey<<<grid, block>>>(rgb, grey);
    return 0;
}
