// Tile transpose that forgot the barrier between the tile store and the transposed read.
#define TILE 32
__global__ void transpose_racy(const float* in, float* out, int width, int height) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    out[y * height + x] = tile[threadIdx.x][threadIdx.y];  // expect: race
}

void launch(const float* in, float* out, int w, int h) {
    dim3 block(32, 32);
    dim3 grid(w / 32, h / 32);
    transpose_racy<<<grid, block>>>(in, out, w, h);
}
