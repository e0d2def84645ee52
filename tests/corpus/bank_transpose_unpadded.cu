// Tiled transpose with an unpadded 32x32 tile: the column read is a 32-way conflict.
#define TILE 32
__global__ void transpose_tiled(const float* in, float* out, int width, int height) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    out[y * height + x] = tile[threadIdx.x][threadIdx.y];  // expect: bank-conflict
}

void launch(const float* in, float* out, int w, int h) {
    transpose_tiled<<<dim3(w / TILE, h / TILE), dim3(TILE, TILE)>>>(in, out, w, h);
}
