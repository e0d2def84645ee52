// expect: none
// The classic padded-tile transpose: coalesced both ways, no bank conflicts, one barrier.
#define TILE 32
#define ROWS 8
__global__ void transpose(const float* in, float* out, int width, int height) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

void launch(const float* in, float* out, int w, int h) {
    dim3 block(TILE, ROWS);
    dim3 grid((w + TILE - 1) / TILE, (h + TILE - 1) / TILE);
    transpose<<<grid, block>>>(in, out, w, h);
}
